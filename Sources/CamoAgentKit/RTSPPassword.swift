/// The RTSP password: the configured one, else one generated at first start and kept in the state directory
/// (`rtsp-password`, mode 0600) so NVRs keep working across restarts. `camo-agent web rtsp` shows it.
public enum RTSPPassword {
    /// 16 characters: about 95 bits.
    static let secret = StateSecret(fileName: "rtsp-password", length: 16, minimum: 8)

    /// The configured password, or the saved one, or a new one (saved).
    static func loadOrCreate(configured: String?, stateDirectory: String) throws -> String {
        try secret.loadOrCreate(configured: configured, stateDirectory: stateDirectory)
    }

    /// The saved password, if any (for `camo-agent web rtsp`).
    public static func saved(stateDirectory: String) -> String? { secret.saved(stateDirectory: stateDirectory) }
}
