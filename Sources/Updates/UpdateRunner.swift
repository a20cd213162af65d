// SPDX-License-Identifier: GPL-2.0-or-later
import Concurrency
import Glasses

/// Runs a planned update on the paired glasses: each planned image by its kind's updater, in the
/// kind's order, each proven done by the version the glasses report afterwards.
public struct UpdateRunner: Sendable {
    let context: UpdateContext
    /// The paired glasses' kind's updaters.
    let updaters: [any ComponentUpdater]

    public init(updaters: [any ComponentUpdater], context: UpdateContext) {
        self.updaters = updaters
        self.context = context
    }

    /// The glasses' versions at the end.
    public func run(_ images: UpdateImages, plan: UpdatePlan) async throws -> DeviceInfo? {
        var info = context.statuses.current.info
        for image in images.ordered where plan.contains(image.component) {
            let updater = try updater(image.component)
            info = try await updater.apply(image, context)
            try updater.verify(info, wanted: image.version)
        }
        return info
    }

    /// After a stop of glassd mid-transfer (or glasses found in their bootloader): the image sent
    /// from what the glasses hold and the glasses back; nil when they were not waiting for it.
    public func recover(_ image: ComponentImage) async throws -> DeviceInfo? {
        let updater = try updater(image.component)
        guard updater.recovers else { throw UpdateFailure("The \(updater.label) update has no step to finish.") }
        guard let info = try await updater.recover(image, context) else { return nil }
        try updater.verify(info, wanted: image.version)
        return info
    }

    private func updater(_ component: String) throws -> any ComponentUpdater {
        guard let updater = updaters.first(where: { $0.component == component }) else {
            throw UpdateFailure("These glasses have no \(component) to update.")
        }
        return updater
    }

    /// The bar for the images a plan applies with these updaters.
    public static func progressBar(_ images: UpdateImages, _ plan: UpdatePlan, updaters: [any ComponentUpdater]) -> ProgressBar {
        ProgressBar.plan(
            images.ordered.filter { plan.contains($0.component) }.compactMap { image in
                updaters.first { $0.component == image.component }?.phases(image)
            })
    }
}
