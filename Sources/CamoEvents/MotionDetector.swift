import CamoMedia

/// Finds motion in a camera's frames, per activity zone (or over the whole picture when there are no zones). A
/// plain value with no I/O and no clock: feed it each frame (or its ``LumaGrid``) with the frame's time.
///
/// How it decides:
/// 1. **Grid.** The frame's luma is averaged over a 64x36 grid (16:9, square 20x20-pixel cells at 1280x720; see
///    ``LumaGrid``). Averaging 36 or more sampled pixels per cell cuts sensor noise by 6 or more, and 2,304 cells
///    cost little to compare (about 0.1 ms); a zone drawn on the 0...2048 zone space still has cells at 1/64 of the
///    width. 80x45 would cost 1.6 times as much for detail that a zone outline rarely needs.
/// 2. **Background.** Each cell keeps a background luma, an exponential average of its past values. A cell that
///    did not change follows the picture with a 1 s time constant; a changed cell with a 10 s one, so something
///    that arrives and stays (a parked car) stops counting as motion after some 10 to 20 s, while something moving
///    keeps standing out.
/// 3. **Global change removed.** Auto-exposure and lights change every cell at once: a gain and an offset
///    (`luma ≈ a + b × background`). Both are fitted over the whole grid by least squares (the gain pulled towards
///    1 when the background is flat, so a grey wall does not give a wild gain), then refitted without the cells
///    that stand out. A cell's change is what the fit does not explain. Its threshold grows by 35 % of the change
///    the fit does explain, since exposure is not exactly linear per cell. Clipping is per colour channel, so the grid
///    also counts each cell's samples with a channel at 250 or more (or 5 or less): a cell with a quarter of them
///    clipped (before or now) is left out of the fit and counts only in the direction clipping cannot explain.
/// 4. **Zones.** A cell changed when its unexplained change reaches the sensitivity's cell threshold; a zone has
///    motion when enough of its cells changed (``MotionSensitivity``) on ``Configuration/confirmFrames``
///    frames in a row (2: one odd frame, a glitch, does not fire). A cell belongs to a zone when its centre lies
///    inside the zone's outline.
///
/// The first frame (and the first after ``reset()`` or a grid of another size) only sets the background; new zones
/// or a new sensitivity keep it. A frame whose time goes backwards or jumps more than 1 s counts as 1 s later for
/// the averages.
public struct MotionDetector: Sendable {
    /// The grid size and sensitivity.
    public struct Configuration: Sendable, Hashable {
        /// Grid cells across (64).
        public var columns: Int
        /// Grid cells down (36).
        public var rows: Int
        /// The model's `motionSensitivity`.
        public var sensitivity: MotionSensitivity
        /// Frames in a row on which a zone must have enough changed cells (2).
        public var confirmFrames: Int

        /// A configuration; the defaults are a 64x36 grid, medium sensitivity, and 2 frames to confirm.
        public init(columns: Int = 64, rows: Int = 36, sensitivity: MotionSensitivity = .medium, confirmFrames: Int = 2) {
            self.columns = max(columns, 1)
            self.rows = max(rows, 1)
            self.sensitivity = sensitivity
            self.confirmFrames = max(confirmFrames, 1)
        }
    }

    // MARK: Tuning.

    /// Time constant of a background cell that did not change, ns.
    static let followNanos: Double = 1_000_000_000
    /// Time constant of a background cell that changed, ns.
    static let absorbNanos: Double = 10_000_000_000
    /// Longest time step the averages take, ns.
    static let maxStepNanos: UInt64 = 1_000_000_000
    /// Background variance (luma²) that pulls the fitted gain towards 1.
    static let gainPrior: Double = 100
    /// Part of the explained change added to a cell's threshold.
    static let explainedAllowance: Float = 0.35
    /// Luma from which a cell counts as clipped white.
    static let clipHigh: Float = 251
    /// Luma up to which a cell counts as clipped black.
    static let clipLow: Float = 4
    /// The fraction of a cell's samples with a clipped colour channel from which the cell counts as clipped.
    static let clippedFraction: Float = 0.25

    /// The grid size and sensitivity in use.
    public private(set) var configuration: Configuration
    /// The zones motion is judged in; empty for the whole picture.
    public private(set) var zones: ZoneList
    /// Which cells changed on the last frame, row by row (empty before the second frame).
    public private(set) var changedCells: [Bool] = []

    private var background: [Float] = []
    /// Per cell: the background's fraction of samples clipped white / black (averaged like the background).
    private var backgroundWhite: [Float] = []
    private var backgroundBlack: [Float] = []
    private var lastTime: UInt64?
    /// Per reported zone (or the whole picture): its cells' indices.
    private var zoneCells: [(id: UInt16?, cells: [Int])] = []
    /// Per reported zone: frames in a row with enough changed cells.
    private var streaks: [Int] = []

    /// A detector with no background yet.
    public init(configuration: Configuration = Configuration(), zones: ZoneList = ZoneList()) {
        self.configuration = configuration
        self.zones = zones
        rebuildZoneCells()
    }

    /// Uses other zones from the next frame on (the background stays).
    public mutating func setZones(_ zones: ZoneList) {
        self.zones = zones
        rebuildZoneCells()
    }

    /// Uses another sensitivity from the next frame on (the background stays).
    public mutating func setSensitivity(_ sensitivity: MotionSensitivity) {
        configuration.sensitivity = sensitivity
    }

    /// Forgets the background: the next frame starts it again.
    public mutating func reset() {
        background = []
        backgroundWhite = []
        backgroundBlack = []
        lastTime = nil
        changedCells = []
        streaks = Array(repeating: 0, count: zoneCells.count)
    }

    private mutating func rebuildZoneCells() {
        let columns = configuration.columns, rows = configuration.rows
        if zones.isEmpty {
            zoneCells = [(nil, Array(0..<(columns * rows)))]
        } else {
            zoneCells = zones.zones.map { zone in
                (zone.id, zone.mask(columns: columns, rows: rows).enumerated().compactMap { $0.element ? $0.offset : nil })
            }
        }
        streaks = Array(repeating: 0, count: zoneCells.count)
    }

    /// Judges one frame captured at `now` (ns). A frame that is not BGRA or RGBA, or smaller than the grid, is
    /// skipped: the report has no zones and nothing changes.
    public mutating func process(_ frame: VideoFrame, now: UInt64) -> MotionReport {
        guard let grid = LumaGrid(frame: frame, columns: configuration.columns, rows: configuration.rows) else {
            return MotionReport(time: now, zones: [], changedCells: 0)
        }
        return process(grid, now: now)
    }

    /// Judges one frame's luma grid, captured at `now` (ns). A grid of another size than the configuration's
    /// restarts the background.
    public mutating func process(_ grid: LumaGrid, now: UInt64) -> MotionReport {
        let count = configuration.columns * configuration.rows
        guard grid.columns == configuration.columns, grid.rows == configuration.rows, background.count == count else {
            reset()
            if grid.columns == configuration.columns, grid.rows == configuration.rows {
                background = grid.values
                backgroundWhite = grid.whiteClipped
                backgroundBlack = grid.blackClipped
                lastTime = now
            }
            return MotionReport(time: now, zones: [], changedCells: 0)
        }
        let step = lastTime.map { now >= $0 ? min(now - $0, Self.maxStepNanos) : Self.maxStepNanos } ?? 0
        lastTime = now

        let current = grid.values
        let threshold = configuration.sensitivity.cellThreshold
        // Clipped cells, before (the background) and now: their luma only bounds the true one.
        var whiteBefore = [Bool](repeating: false, count: count), blackBefore = whiteBefore
        var whiteNow = whiteBefore, blackNow = whiteBefore
        var unclipped = whiteBefore
        for i in 0..<count {
            whiteBefore[i] = backgroundWhite[i] >= Self.clippedFraction || background[i] >= Self.clipHigh
            blackBefore[i] = backgroundBlack[i] >= Self.clippedFraction || background[i] <= Self.clipLow
            whiteNow[i] = grid.whiteClipped[i] >= Self.clippedFraction || current[i] >= Self.clipHigh
            blackNow[i] = grid.blackClipped[i] >= Self.clippedFraction || current[i] <= Self.clipLow
            unclipped[i] = !(whiteBefore[i] || blackBefore[i] || whiteNow[i] || blackNow[i])
        }

        var fit = Self.fitGlobalChange(background: background, current: current, included: unclipped)
        // Refit without the cells the first fit leaves far off (whatever moved).
        var inliers = unclipped
        var inlierCount = 0
        for i in 0..<count where inliers[i] {
            if abs(current[i] - fit.predict(background[i])) < threshold {
                inlierCount += 1
            } else {
                inliers[i] = false
            }
        }
        if inlierCount >= count / 4 {
            fit = Self.fitGlobalChange(background: background, current: current, included: inliers)
        }

        var changed = [Bool](repeating: false, count: count)
        var changedTotal = 0
        for i in 0..<count {
            let before = background[i]
            let predicted = fit.predict(before)
            let residual = current[i] - predicted
            let limit = threshold + Self.explainedAllowance * abs(predicted - before)
            // A change that clipping could explain does not count: brighter than the fit when the cell was white
            // before (it may have been brighter than it showed) or is black now, darker when it was black before
            // or is white now.
            let isChanged: Bool
            if residual >= limit {
                isChanged = !whiteBefore[i] && !blackNow[i]
            } else if residual <= -limit {
                isChanged = !blackBefore[i] && !whiteNow[i]
            } else {
                isChanged = false
            }
            changed[i] = isChanged
            if isChanged { changedTotal += 1 }
        }

        // Background update.
        let follow = Float(Double(step) / (Self.followNanos + Double(step)))
        let absorb = Float(Double(step) / (Self.absorbNanos + Double(step)))
        for i in 0..<count {
            let weight = changed[i] ? absorb : follow
            background[i] += weight * (current[i] - background[i])
            // The clipping of a changed cell is the moving thing's, not the background's: keep it.
            if !changed[i] {
                backgroundWhite[i] += follow * (grid.whiteClipped[i] - backgroundWhite[i])
                backgroundBlack[i] += follow * (grid.blackClipped[i] - backgroundBlack[i])
            }
        }

        var reports: [ZoneMotion] = []
        reports.reserveCapacity(zoneCells.count)
        for (index, zone) in zoneCells.enumerated() {
            var zoneChanged = 0
            for cell in zone.cells where changed[cell] { zoneChanged += 1 }
            let required = configuration.sensitivity.requiredCells(of: zone.cells.count)
            let enough = !zone.cells.isEmpty && zoneChanged >= required
            streaks[index] = enough ? streaks[index] + 1 : 0
            reports.append(
                ZoneMotion(
                    zoneID: zone.id, cells: zone.cells.count, changedCells: zoneChanged, requiredCells: required,
                    isMotion: streaks[index] >= configuration.confirmFrames))
        }
        changedCells = changed
        return MotionReport(time: now, zones: reports, changedCells: changedTotal)
    }

    /// `current ≈ offset + gain × background`.
    struct GlobalChange {
        var offset: Float
        var gain: Float
        func predict(_ background: Float) -> Float { offset + gain * background }
    }

    /// Least-squares gain and offset over the included cells, the gain pulled towards 1 by ``gainPrior`` and kept
    /// within 0.25...4.
    static func fitGlobalChange(background: [Float], current: [Float], included: [Bool]) -> GlobalChange {
        var n = 0.0, sumX = 0.0, sumY = 0.0
        for i in background.indices where included[i] {
            let x = background[i], y = current[i]
            n += 1
            sumX += Double(x)
            sumY += Double(y)
        }
        guard n > 0 else { return GlobalChange(offset: 0, gain: 1) }
        let meanX = sumX / n, meanY = sumY / n
        var sxx = 0.0, sxy = 0.0
        for i in background.indices where included[i] {
            let x = background[i], y = current[i]
            let dx = Double(x) - meanX
            sxx += dx * dx
            sxy += dx * (Double(y) - meanY)
        }
        let gain = min(max((sxy + gainPrior * n) / (sxx + gainPrior * n), 0.25), 4)
        return GlobalChange(offset: Float(meanY - gain * meanX), gain: Float(gain))
    }
}
