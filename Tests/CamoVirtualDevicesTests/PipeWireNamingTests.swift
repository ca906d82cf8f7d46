import CamoVirtualDevices
import Testing

@Suite("The PipeWire microphone's name and choice")
struct PipeWireNamingTests {
    @Test("The node is camo- and the agent's name in lower case, anything else made a dash", arguments: [
        ("Kitchen Cam", "camo-kitchen-cam"), ("desk", "camo-desk"), ("127.0.0.1:4000", "camo-127-0-0-1-4000"),
        ("Café  door", "camo-caf-door"), ("", "camo-agent"), ("--", "camo-agent"), ("front_door-2", "camo-front_door-2"),
    ])
    func nodeName(agent: String, node: String) {
        #expect(VirtualMicrophone.pipeWireNodeName(agent: agent) == node)
    }

    @Test("--microphone pipewire, auto, none and an ALSA device")
    func choice() {
        #expect(StudioCamera.MicrophoneChoice(argument: "pipewire") == .pipeWire)
        #expect(StudioCamera.MicrophoneChoice(argument: "auto") == .auto)
        #expect(StudioCamera.MicrophoneChoice(argument: "none") == StudioCamera.MicrophoneChoice.none)
        #expect(StudioCamera.MicrophoneChoice(argument: "hw:CamoMic,0,0") == .device("hw:CamoMic,0,0"))
    }
}
