import FuzzSupport

@testable import CamoLive

// A browser's WHEP offer (POST /whep, or offerSdp in POST /api/live) as live view reads it before any pipeline
// exists: our line check, GStreamer's SDP parser (libgstsdp, C: its own parsing is not instrumented, only what we do
// with its result), then our choice of the H.264 and Opus payload types, the directions and the mids. The trickle
// fragments of PATCH /whep/sessions/ID are read inside the running pipeline (WebRTCLiveView) and are not reached here;
// their mids are looked up the same way (mlineIndex).
//
// Input: the offer's text (the web server checks only that it starts with v=0).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSDPOffer(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    guard let offer = try? WebRTCOffer(sdp: text) else { return 0 }
    for mid in offer.mids { _ = offer.mlineIndex(mid: mid) }
    _ = offer.mlineIndex(mid: "")
    return 0
}

runFuzzDriver { fuzzSDPOffer($0, $1) }
