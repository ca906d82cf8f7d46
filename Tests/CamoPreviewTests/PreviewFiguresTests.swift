import CamoMedia
@testable import CamoPreview
import Testing

@Suite("PreviewFigures and PreviewLayout")
struct PreviewFiguresTests {
    @Test("the overlay line shows fps with one decimal, whole kbit/s and ms, then the state")
    func overlayText() {
        let figures = PreviewFigures(fps: 29.94, kbitPerSecond: 4200.4, latencyMs: 41.2, state: "streaming")
        #expect(figures.overlayText == "29.9 fps  4200 kbit/s  41 ms  streaming")
    }

    @Test("unknown figures are left out, and nonsense numbers show as zero")
    func missing() {
        #expect(PreviewFigures(fps: 30, state: "streaming").overlayText == "30.0 fps  streaming")
        #expect(PreviewFigures(fps: .nan, latencyMs: -3, state: "").overlayText == "0.0 fps  0 ms")
        #expect(PreviewFigures(fps: 59.96, kbitPerSecond: .infinity, state: "reconnecting…").overlayText == "60.0 fps  0 kbit/s  reconnecting…")
    }

    @Test(
        "the first window fits the picture within 1280x720 with its aspect ratio, never larger than the picture",
        arguments: [
            (VideoSize(width: 1920, height: 1080), VideoSize(width: 1280, height: 720)),
            (VideoSize(width: 1280, height: 720), VideoSize(width: 1280, height: 720)),
            (VideoSize(width: 640, height: 480), VideoSize(width: 640, height: 480)),
            (VideoSize(width: 1080, height: 1920), VideoSize(width: 405, height: 720)),
            (VideoSize(width: 4000, height: 3000), VideoSize(width: 960, height: 720)),
        ])
    func initialWindowSize(picture: VideoSize, expected: VideoSize) {
        #expect(PreviewLayout.initialWindowSize(for: picture) == expected)
    }

    @Test("the picture is letterboxed or pillarboxed in the middle of the window")
    func pictureRect() {
        let output = VideoSize(width: 1280, height: 720)
        #expect(PreviewLayout.pictureRect(picture: VideoSize(width: 640, height: 360), output: output) == PixelRect(x: 0, y: 0, width: 1280, height: 720))
        #expect(PreviewLayout.pictureRect(picture: VideoSize(width: 640, height: 480), output: output) == PixelRect(x: 160, y: 0, width: 960, height: 720))
        #expect(PreviewLayout.pictureRect(picture: VideoSize(width: 1920, height: 600), output: output) == PixelRect(x: 0, y: 160, width: 1280, height: 400))
    }
}
