// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import GlassdCore

/// The one place where core errors become D-Bus errors.
enum ErrorMapping {
    static func busError(_ error: AssistantError) -> BusError {
        let name =
            switch error {
            case .invalidArgs: GlassdErrorName.invalidArgs
            case .notConfigured: GlassdErrorName.notConfigured
            case .unauthorized: GlassdErrorName.unauthorized
            case .rateLimited: GlassdErrorName.rateLimited
            case .upstreamFailed: GlassdErrorName.upstreamFailed
            case .timeout: GlassdErrorName.timeout
            case .internalFailure: "org.freedesktop.DBus.Error.Failed"
            }
        return BusError(name: name, message: error.message)
    }

    static func busError(_ error: LinkError) -> BusError {
        let name =
            switch error {
            case .invalidAddress: GlassdErrorName.invalidArgs
            case .noAdapter: GlassdErrorName.noAdapter
            case .notFound: GlassdErrorName.notFound
            case .alreadyPaired: GlassdErrorName.alreadyPaired
            case .busy: GlassdErrorName.busy
            case .notPaired: GlassdErrorName.notPaired
            case .unreachable: GlassdErrorName.notConnected
            case .failed: "org.freedesktop.DBus.Error.Failed"
            }
        return BusError(name: name, message: error.message)
    }
}
