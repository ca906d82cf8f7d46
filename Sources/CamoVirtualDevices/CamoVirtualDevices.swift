/// The studio's virtual devices: the agent's picture as a v4l2loopback camera and its sound as a capture device
/// other programs open, with the setup that makes them appear.
public enum CamoVirtualDevices {}
