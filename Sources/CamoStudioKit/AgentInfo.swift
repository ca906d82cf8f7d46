import CamoWire

/// Who the agent is and what it will send: its hello as it arrived, and the long-term key the handshake
/// proved. The hello's fields read through (`agent.agentName`, `agent.model`, `agent.capabilities`, ...);
/// the frame size and codec read in the studio's terms.
@dynamicMemberLookup
public struct AgentInfo: Sendable, Equatable {
    /// The agent's hello.
    public var hello: AgentHello
    /// The agent's long-term public key as proven in the handshake.
    public var staticPublicKey: [UInt8]

    /// Agent info from the agent's hello and the key its handshake proved.
    public init(hello: AgentHello, staticPublicKey: [UInt8]) {
        self.hello = hello
        self.staticPublicKey = staticPublicKey
    }

    /// A field of the agent's hello.
    public subscript<Value>(dynamicMember field: KeyPath<AgentHello, Value>) -> Value {
        hello[keyPath: field]
    }

    /// Frame width the agent will send.
    public var width: Int { Int(hello.width) }
    /// Frame height the agent will send.
    public var height: Int { Int(hello.height) }
    /// The codec the agent will send.
    public var codec: StudioVideoCodec { StudioVideoCodec(hello.codec) }
    /// The agent can pause a session on request.
    public var canPause: Bool { hello.capabilities.contains(.pause) }
    /// The agent sends audio.
    public var hasAudio: Bool { hello.capabilities.contains(.audio) }
}
