import CGStreamer

/// The GLib signal handlers of the RTSP server: C functions that capture nothing and find their ``RTSPCore``
/// through the user data, which holds a retained reference released when GLib drops the handler.
enum RTSPSignals {
    /// Connects `handler` to `signal` of `instance` with a retained `core` as its data.
    private static func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ handler: GCallback, core: RTSPCore) {
        let release: GClosureNotify = { data, _ in
            guard let data else { return }
            Unmanaged<RTSPCore>.fromOpaque(data).release()
        }
        let data = Unmanaged.passRetained(core).toOpaque()
        if camo_g_signal_connect_notify(instance, signal, handler, data, release) == 0 {
            Unmanaged<RTSPCore>.fromOpaque(data).release()
        }
    }

    private static func core(_ data: UnsafeMutableRawPointer?) -> RTSPCore? {
        data.map { Unmanaged<RTSPCore>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The factory's `media-configure`: the shared media was made.
    static func connectFactory(_ factory: UnsafeMutablePointer<GstRTSPMediaFactory>, core: RTSPCore) {
        let configure: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            _, media, data in
            guard let media else { return }
            RTSPSignals.core(data)?.mediaConfigured(media.assumingMemoryBound(to: GstRTSPMedia.self))
        }
        connect(factory, "media-configure", unsafeBitCast(configure, to: GCallback.self), core: core)
    }

    /// The media's `unprepared`: the shared media stopped.
    static func connectMedia(_ media: UnsafeMutablePointer<GstRTSPMedia>, core: RTSPCore) {
        let unprepared: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { media, data in
            guard let media else { return }
            RTSPSignals.core(data)?.mediaUnprepared(media.assumingMemoryBound(to: GstRTSPMedia.self))
        }
        connect(media, "unprepared", unsafeBitCast(unprepared, to: GCallback.self), core: core)
    }

    /// The server's `client-connected`.
    static func connectServer(_ server: UnsafeMutablePointer<GstRTSPServer>, core: RTSPCore) {
        let connected: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            _, client, data in
            guard let client else { return }
            RTSPSignals.core(data)?.clientConnected(client.assumingMemoryBound(to: GstRTSPClient.self))
        }
        connect(server, "client-connected", unsafeBitCast(connected, to: GCallback.self), core: core)
    }

    /// The client's `closed` and `play-request`.
    static func connectClient(_ client: UnsafeMutablePointer<GstRTSPClient>, core: RTSPCore) {
        let closed: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { client, data in
            guard let client else { return }
            RTSPSignals.core(data)?.clientClosed(client.assumingMemoryBound(to: GstRTSPClient.self))
        }
        let play: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = {
            _, _, data in
            RTSPSignals.core(data)?.clientPlays()
        }
        connect(client, "closed", unsafeBitCast(closed, to: GCallback.self), core: core)
        connect(client, "play-request", unsafeBitCast(play, to: GCallback.self), core: core)
    }

    /// The client's IP address, for the log.
    static func address(of client: UnsafeMutablePointer<GstRTSPClient>) -> String {
        guard let connection = gst_rtsp_client_get_connection(client), let ip = gst_rtsp_connection_get_ip(connection) else {
            return "?"
        }
        return String(cString: ip)
    }
}

/// A listening gst-rtsp-server: the server, its listening source and its session cleanup, on GStreamer's main loop.
/// Unchecked Sendable: GLib sources and GObjects are thread safe; ``close()`` runs once.
struct RTSPListener: @unchecked Sendable {
    let server: UnsafeMutablePointer<GstRTSPServer>
    let source: UnsafeMutablePointer<GSource>
    let cleanup: UnsafeMutablePointer<GSource>
    /// The TCP port it listens on.
    let boundPort: Int

    /// Builds the server (mount point, shared media factory, DIGEST authentication) and starts listening.
    init(configuration: RTSPConfiguration, core: RTSPCore, launch: String) throws(RTSPError) {
        guard let server = gst_rtsp_server_new() else { throw .setupFailed("gst_rtsp_server_new failed") }
        gst_rtsp_server_set_address(server, configuration.bindAddress)
        gst_rtsp_server_set_service(server, String(configuration.port))

        guard let factory = gst_rtsp_media_factory_new() else {
            g_object_unref(server)
            throw .setupFailed("gst_rtsp_media_factory_new failed")
        }
        gst_rtsp_media_factory_set_launch(factory, launch)
        gst_rtsp_media_factory_set_shared(factory, 1)
        // The media's rtpbin latency (200 ms by default) is for jitter on what it receives; this media only sends.
        gst_rtsp_media_factory_set_latency(factory, 0)
        RTSPSignals.connectFactory(factory, core: core)

        if let credentials = configuration.credentials {
            let role = "camo-viewer"
            guard let auth = gst_rtsp_auth_new() else {
                g_object_unref(factory)
                g_object_unref(server)
                throw .setupFailed("gst_rtsp_auth_new failed")
            }
            gst_rtsp_auth_set_supported_methods(auth, GST_RTSP_AUTH_DIGEST)
            gst_rtsp_auth_set_realm(auth, configuration.realm)
            let token = camo_rtsp_token_new_factory_role(role)
            gst_rtsp_auth_add_digest(auth, credentials.username, credentials.password, token)
            gst_rtsp_token_unref(token)
            gst_rtsp_server_set_auth(server, auth)
            g_object_unref(auth)
            camo_rtsp_media_factory_allow_role(factory, role)
        }

        let mounts = gst_rtsp_server_get_mount_points(server)
        gst_rtsp_mount_points_add_factory(mounts, configuration.path, factory)  // takes the factory
        g_object_unref(mounts)
        RTSPSignals.connectServer(server, core: core)

        var error: UnsafeMutablePointer<GError>?
        guard let source = gst_rtsp_server_create_source(server, nil, &error) else {
            // gio's error domain by its name: CGStreamer does not link gio itself.
            let message = camo_g_error_message(error).map { String(cString: $0) } ?? "unknown error"
            let inUse = error.map { $0.pointee.domain == g_quark_try_string("g-io-error-quark") && $0.pointee.code == Int32(G_IO_ERROR_ADDRESS_IN_USE.rawValue) } ?? false
            if let error { g_error_free(error) }
            g_object_unref(server)
            if inUse || message.localizedLowercase.contains("in use") {
                throw .portInUse(port: configuration.port, bindAddress: configuration.bindAddress)
            }
            throw .bindFailed(port: configuration.port, bindAddress: configuration.bindAddress, reason: message)
        }
        g_source_attach(source, nil)
        self.server = server
        self.source = source
        self.cleanup = camo_rtsp_session_cleanup_source(server, 2)
        self.boundPort = Int(gst_rtsp_server_get_bound_port(server))
    }

    /// Stops listening and closes every client.
    func close() {
        g_source_destroy(source)
        g_source_unref(source)
        g_source_destroy(cleanup)
        g_source_unref(cleanup)
        camo_rtsp_server_close_clients(server)
        g_object_unref(server)
    }
}
