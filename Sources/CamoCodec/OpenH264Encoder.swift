import COpenH264
import CYUV
import CamoMedia
import Logging

/// Cisco's libopenh264, driven through its C vtable (the shim's `camo_wels_*` calls).
///
/// Debian's libavcodec is built without its libopenh264 wrapper, so this is the only way to it. Single
/// spatial and temporal layer, single slice, one reference, CAVLC (constrained baseline), real-time camera
/// usage, bit-rate rate control without frame skipping. The layers of each output are concatenated: they
/// are Annex B already. Not thread-safe: ``H264Encoder`` owns it.
final class OpenH264Encoder: H264EncoderBackend {
    private let settings: H264EncoderSettings
    private let encoder: UnsafeMutablePointer<ISVCEncoder?>
    /// The I420 picture: luma, then the two quarter-size chroma planes; reused for every frame.
    private let planes: UnsafeMutableBufferPointer<UInt8>
    /// Keeps the trace callback's Logger alive as long as the encoder.
    private let trace: Unmanaged<TraceSink>
    private let logger: Logger
    private var initialized = false
    /// The target bit rate in force.
    private var current: Int32

    /// The openh264 version loaded at run time, e.g. "2.3.1".
    static var version: String {
        let version = WelsGetCodecVersion()
        return "\(version.uMajor).\(version.uMinor).\(version.uRevision)"
    }

    /// Where libopenh264's trace messages go.
    private final class TraceSink {
        let logger: Logger
        init(logger: Logger) { self.logger = logger }
    }

    init(settings: H264EncoderSettings, logger: Logger) throws(H264Error) {
        try settings.validate()
        var handle: UnsafeMutablePointer<ISVCEncoder?>?
        guard WelsCreateSVCEncoder(&handle) == 0, let handle else {
            throw .open("libopenh264 could not create an encoder")
        }
        let lumaCount = settings.width * settings.height
        self.settings = settings
        self.encoder = handle
        self.planes = .allocate(capacity: lumaCount + 2 * (lumaCount / 4))
        self.trace = .passRetained(TraceSink(logger: logger))
        self.logger = logger
        self.current = Int32(clamping: settings.bitrate)

        // Trace first, so what InitializeExt complains about reaches the logger.
        var callback: WelsTraceCallback? = { context, level, message in
            guard let context, let message else { return }
            let sink = Unmanaged<TraceSink>.fromOpaque(context).takeUnretainedValue()
            let text = String(cString: message).trimmingTrailingWhitespace
            // Frame skipping is off on purpose (every frame must give a packet); openh264 warns about it on
            // every open, which is no news.
            let expected = text.contains("bEnableFrameSkip = 0")
            let mapped: Logger.Level = switch level {
            case _ where expected: .debug
            case ...Int32(WELS_LOG_ERROR): .error
            case ...Int32(WELS_LOG_WARNING): .warning
            case ...Int32(WELS_LOG_INFO): .debug
            default: .trace
            }
            sink.logger.log(level: mapped, "\(text)", metadata: ["library": "openh264"])
        }
        var context: UnsafeMutableRawPointer? = trace.toOpaque()
        var traceLevel = Int32(WELS_LOG_WARNING)
        _ = camo_wels_set_option(handle, ENCODER_OPTION_TRACE_CALLBACK, &callback)
        _ = camo_wels_set_option(handle, ENCODER_OPTION_TRACE_CALLBACK_CONTEXT, &context)
        _ = camo_wels_set_option(handle, ENCODER_OPTION_TRACE_LEVEL, &traceLevel)

        var param = SEncParamExt()
        guard camo_wels_get_default_params(handle, &param) == 0 else {
            throw .open("libopenh264 gave no default parameters")
        }
        param.iUsageType = CAMERA_VIDEO_REAL_TIME
        param.iPicWidth = Int32(settings.width)
        param.iPicHeight = Int32(settings.height)
        param.iTargetBitrate = Int32(clamping: settings.bitrate)
        param.iMaxBitrate = Int32(clamping: settings.bitrate)
        param.iRCMode = RC_BITRATE_MODE
        param.fMaxFrameRate = Float(settings.fps)
        param.uiIntraPeriod = UInt32(settings.gopFrames)
        param.bEnableFrameSkip = false
        param.iSpatialLayerNum = 1
        param.iTemporalLayerNum = 1
        param.iNumRefFrame = 1
        // The same ids in every repeated SPS/PPS: a decoder joining at any keyframe sees the same sets.
        param.eSpsPpsIdStrategy = CONSTANT_ID
        param.iEntropyCodingModeFlag = 0
        param.iMultipleThreadIdc = 1
        param.bEnableSceneChangeDetect = false
        let layer = camo_wels_spatial_layer(&param, 0)
        layer.pointee.iVideoWidth = Int32(settings.width)
        layer.pointee.iVideoHeight = Int32(settings.height)
        layer.pointee.fFrameRate = Float(settings.fps)
        layer.pointee.iSpatialBitrate = Int32(clamping: settings.bitrate)
        layer.pointee.iMaxSpatialBitrate = Int32(clamping: settings.bitrate)
        layer.pointee.sSliceArgument.uiSliceMode = SM_SINGLE_SLICE
        // BT.601 limited range in the VUI, as libyuv's ARGBToI420 produces.
        layer.pointee.bVideoSignalTypePresent = true
        layer.pointee.uiVideoFormat = UInt8(VF_UNDEF.rawValue)
        layer.pointee.bFullRange = false
        layer.pointee.bColorDescriptionPresent = true
        layer.pointee.uiColorPrimaries = UInt8(CP_UNDEF.rawValue)
        layer.pointee.uiTransferCharacteristics = UInt8(TRC_UNDEF.rawValue)
        layer.pointee.uiColorMatrix = UInt8(CM_SMPTE170M.rawValue)

        let result = camo_wels_initialize_ext(handle, &param)
        guard result == 0 else {
            throw .open("libopenh264 refused \(settings.width)x\(settings.height) at \(settings.bitrate) b/s (error \(result))")
        }
        initialized = true
        var format = Int32(videoFormatI420.rawValue)
        _ = camo_wels_set_option(handle, ENCODER_OPTION_DATAFORMAT, &format)
        logger.debug("Opened libopenh264 \(Self.version) (\(settings.width)x\(settings.height), \(settings.bitrate) b/s).")
    }

    deinit {
        if initialized { _ = camo_wels_uninitialize(encoder) }
        WelsDestroySVCEncoder(encoder)
        trace.release()
        planes.deallocate()
    }

    func setBitrate(_ bitsPerSecond: Int) {
        let rate = Int32(clamping: bitsPerSecond)
        // The maximum first when raising (the target may not exceed it), last when lowering.
        let raising = rate > current
        if raising { setRate(ENCODER_OPTION_MAX_BITRATE, rate) }
        setRate(ENCODER_OPTION_BITRATE, rate)
        if !raising { setRate(ENCODER_OPTION_MAX_BITRATE, rate) }
        current = rate
    }

    private func setRate(_ option: ENCODER_OPTION, _ rate: Int32) {
        for layer in [SPATIAL_LAYER_ALL, SPATIAL_LAYER_0] {
            var info = SBitrateInfo(iLayer: layer, iBitrate: rate)
            let result = camo_wels_set_option(encoder, option, &info)
            if result != 0 { logger.warning("libopenh264 refused bit rate \(rate) b/s (option \(option.rawValue), error \(result)).") }
        }
    }

    func encode(_ frame: VideoFrame, index: Int64, forceKeyframe: Bool) throws(H264Error) -> H264Packet? {
        let width = settings.width, height = settings.height
        let chromaWidth = width / 2
        guard let y = planes.baseAddress else { throw .encode("no picture buffer") }
        let u = y + width * height
        let v = u + chromaWidth * (height / 2)
        let converted = frame.data.withUnsafeBufferPointer { source -> Int32 in
            guard let pixels = source.baseAddress else { return -1 }
            return ARGBToI420(
                pixels, Int32(frame.bytesPerRow), y, Int32(width), u, Int32(chromaWidth), v, Int32(chromaWidth),
                Int32(width), Int32(height))
        }
        guard converted == 0 else { throw .badFrame("libyuv could not convert the BGRA picture (\(converted))") }

        var picture = SSourcePicture()
        picture.iColorFormat = Int32(videoFormatI420.rawValue)
        picture.iPicWidth = Int32(width)
        picture.iPicHeight = Int32(height)
        picture.uiTimeStamp = index * 1000 / Int64(settings.fps)
        camo_wels_set_planes(&picture, y, Int32(width), u, Int32(chromaWidth), v, Int32(chromaWidth))
        if forceKeyframe {
            let forced = camo_wels_force_intra_frame(encoder, true)
            if forced != 0 { logger.warning("libopenh264 refused to force an IDR (error \(forced)).") }
        }
        var info = SFrameBSInfo()
        let result = camo_wels_encode_frame(encoder, &picture, &info)
        guard result == 0 else { throw .encode("libopenh264 EncodeFrame returned \(result)") }
        guard info.eFrameType != videoFrameTypeSkip, info.eFrameType != videoFrameTypeInvalid else { return nil }

        var data: [UInt8] = []
        data.reserveCapacity(Int(info.iFrameSizeInBytes))
        for layerIndex in 0..<info.iLayerNum {
            let layer = camo_wels_layer(&info, layerIndex)
            guard let lengths = layer.pointee.pNalLengthInByte, let bytes = layer.pointee.pBsBuf else { continue }
            var layerSize = 0
            for nal in 0..<Int(layer.pointee.iNalCount) { layerSize += Int(lengths[nal]) }
            data.append(contentsOf: UnsafeBufferPointer(start: bytes, count: layerSize))
        }
        return H264Packet(data: data, isKeyframe: info.eFrameType == videoFrameTypeIDR, frameIndex: index)
    }
}
