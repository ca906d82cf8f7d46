import CamoMedia

extension CameraSource: CameraControlling {
    /// The camera's controls, read through a second open of the node (V4L2 allows it while streaming).
    public func cameraControls() throws -> [CameraControl] {
        try CameraSource.controls(path: identity?.path ?? configuration.path)
    }

    /// Sets one control by name and returns it as the driver reports it afterwards.
    public func setCameraControl(name: String, value: String) throws -> CameraControl {
        try CameraSource.setControl(path: identity?.path ?? configuration.path, name: name, value: value)
    }

    /// The controls of the camera at `path`, common ones first.
    public static func controls(path: String) throws(CameraError) -> [CameraControl] {
        let device = try V4L2Device(path: path)
        defer { device.closeDevice() }
        return CommonControls.ordered(try device.controls())
    }

    /// Sets control `name` of the camera at `path` from its text form.
    /// - Throws: ``CameraControlError`` for an unknown name or a bad value; ``CameraError`` from the device.
    public static func setControl(path: String, name: String, value: String) throws -> CameraControl {
        let device = try V4L2Device(path: path)
        defer { device.closeDevice() }
        let controls = try device.controls()
        guard var control = controls.first(where: { $0.name == name.lowercased() }) else {
            throw CameraControlError(
                "The camera has no control named '\(name)'. It has: \(CommonControls.ordered(controls).map(\.name).joined(separator: ", ")).")
        }
        let parsed = try control.parse(value)
        control.value = try device.setControl(id: control.id, value: parsed)
        return control
    }

    /// Modes of the camera at `path`: its formats with sizes and rates, for `camo-agent devices`.
    public static func formats(path: String) throws(CameraError) -> [CameraFormat] {
        let device = try V4L2Device(path: path)
        defer { device.closeDevice() }
        return try device.formats()
    }
}
