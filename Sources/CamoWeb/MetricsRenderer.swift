import Prometheus

/// Renders metric samples as Prometheus text (version 0.0.4) through swift-prometheus: a fresh
/// `PrometheusCollectorRegistry` per scrape, one gauge or counter per sample, then `emitToString()`.
///
/// The registry stops the process on inconsistent families (one name as both gauge and counter, labelled and
/// unlabelled samples, different help), so samples are checked first: a sample with an invalid name, a negative
/// counter value, or that disagrees with the first sample of its name is left out and reported in `skipped`.
enum MetricsRenderer {
    /// The Content-Type of the text format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text for `samples`, and the names of samples left out.
    static func render(_ samples: [WebMetric]) -> (text: String, skipped: [String]) {
        struct Family {
            var kind: WebMetric.Kind
            var help: String
            var labelNames: [String]
            var seen: Set<[String]>
        }
        let registry = PrometheusCollectorRegistry()
        var families: [String: Family] = [:]
        var skipped: [String] = []
        for sample in samples {
            let labelNames = sample.labels.keys.sorted()
            guard isValidName(sample.name), labelNames.allSatisfy(isValidLabelName), sample.value.isFinite || sample.kind == .gauge,
                sample.kind == .gauge || sample.value >= 0
            else {
                skipped.append(sample.name)
                continue
            }
            let labels = labelNames.map { ($0, sample.labels[$0] ?? "") }
            let key = labels.map { $0.1 }
            if var family = families[sample.name] {
                guard family.kind == sample.kind, family.labelNames == labelNames, !labelNames.isEmpty,
                    !family.seen.contains(key)
                else {
                    skipped.append(sample.name)
                    continue
                }
                family.seen.insert(key)
                families[sample.name] = family
            } else {
                families[sample.name] = Family(kind: sample.kind, help: sample.help, labelNames: labelNames, seen: [key])
            }
            let help = families[sample.name]?.help ?? sample.help
            let descriptor = MetricNameDescriptor(metricName: sample.name, unitName: "", helpText: help)
            switch sample.kind {
            case .gauge:
                let gauge = labels.isEmpty
                    ? registry.makeGauge(descriptor: descriptor) : registry.makeGauge(descriptor: descriptor, labels: labels)
                gauge.set(sample.value)
            case .counter:
                let counter = labels.isEmpty
                    ? registry.makeCounter(descriptor: descriptor)
                    : registry.makeCounter(descriptor: descriptor, labels: labels)
                if sample.value.rounded() == sample.value && sample.value < 9.0e18 {
                    counter.increment(by: Int64(sample.value))
                } else {
                    counter.increment(by: sample.value)
                }
            }
        }
        return (registry.emitToString(), skipped)
    }

    /// Whether `name` matches `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":") || isDigit($0) }
    }

    /// Whether `name` matches `[a-zA-Z_][a-zA-Z0-9_]*` and does not start with `__`.
    static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !isDigit(first), !name.hasPrefix("__") else { return false }
        return name.utf8.allSatisfy { isLetter($0) || $0 == UInt8(ascii: "_") || isDigit($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
