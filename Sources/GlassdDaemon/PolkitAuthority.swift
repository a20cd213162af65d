// SPDX-License-Identifier: GPL-2.0-or-later
import DBusKit
import GlassdAPI
import Logging
import Synchronization

/// Who may change what on the system bus, decided as systemd's services decide it (the
/// behaviour of its bus-polkit.c): a caller with uid 0 may; anyone else is asked about with
/// polkit's CheckAuthorization, the subject being the caller's bus name, interactive when the
/// caller's message allows it. polkit absent or failing: refused (fail closed), said once in
/// the log. Nothing is cached: polkit keeps its own `auth_admin_keep` grants.
final class PolkitAuthority: Sendable {
    let connection: BusConnection
    let logger: Logger
    private let failureLogged = Mutex(false)

    init(connection: BusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// The gated calls, for `BusConnection.gate`.
    static var gatedCalls: [GatedCall: String] {
        Dictionary(
            GlassdBus.Action.calls.map { call in
                (
                    call.propertyWrite ? GatedCall.propertyWrite(call.interface, call.member) : .method(call.interface, call.member),
                    call.action
                )
            }, uniquingKeysWith: { first, _ in first })
    }

    /// An authentication dialog can take a while; a check without one should not.
    static let interactiveTimeoutSeconds = 300.0
    static let timeoutSeconds = 25.0

    /// How long a typed question waits for Display's check before it is answered without the
    /// glasses: polkit answers in milliseconds, and a hung polkit must not hold questions.
    static let displayCheckSeconds = 2.0

    /// `timeoutSeconds`: how long polkit may take; nil, as suits `request.interactive`.
    func check(_ request: AuthorizationRequest, timeoutSeconds: Double? = nil) async -> AuthorizationDecision {
        do {
            let uid = try await connection.call(
                "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionUnixUser", [.string(request.sender)]
            ).first?.uint32
            if uid == 0 { return .allowed }
        } catch {
            // The caller left, or the bus would not say who it is: nothing to allow.
            return .refused(ErrorMapping.busError(AuthorizationRefusal.unknownCaller))
        }
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                "org.freedesktop.PolicyKit1", path: "/org/freedesktop/PolicyKit1/Authority",
                interface: "org.freedesktop.PolicyKit1.Authority", member: "CheckAuthorization",
                [
                    .structure([.string("system-bus-name"), .dict(key: "s", value: "v", [.init(.string("name"), .variant(.string(request.sender)))])]),
                    .string(request.action), .dict(key: "s", value: "s", []), .uint32(request.interactive ? 1 : 0), .string(""),
                ], timeoutSeconds: timeoutSeconds ?? (request.interactive ? Self.interactiveTimeoutSeconds : Self.timeoutSeconds))
        } catch {
            let first = failureLogged.withLock { logged in
                defer { logged = true }
                return !logged
            }
            if first {
                logger.warning("polkit cannot be asked (\(error)): refusing every caller but root until it answers")
            }
            return .refused(ErrorMapping.busError(AuthorizationRefusal.polkitSilent(action: request.action)))
        }
        guard case .structure(let fields)? = reply.first, fields.count == 3,
            case .bool(let authorized) = fields[0], case .bool(let challenge) = fields[1]
        else {
            return .refused(ErrorMapping.busError(AuthorizationRefusal.polkitUnreadable(action: request.action)))
        }
        failureLogged.withLock { $0 = false }
        if authorized { return .allowed }
        if challenge && !request.interactive {
            return .refused(ErrorMapping.busError(AuthorizationRefusal.needsAuthentication(action: request.action)))
        }
        return .refused(ErrorMapping.busError(AuthorizationRefusal.notAuthorized(action: request.action)))
    }

    /// Whether `sender` passes Display's check (root does), asked without a dialog and briefly:
    /// a typed question shows on the glasses only then, as it writes on them as Display would.
    func allowsDisplay(_ sender: String) async -> Bool {
        let request = AuthorizationRequest(
            sender: sender, action: GlassdBus.Action.manage,
            call: .method(GlassdBus.deviceInterface, GlassdBus.DeviceMethod.display), interactive: false)
        if case .allowed = await check(request, timeoutSeconds: Self.displayCheckSeconds) { return true }
        return false
    }
}
