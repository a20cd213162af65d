// SPDX-License-Identifier: GPL-2.0-or-later

/// Why a gated call was refused (PolkitAuthority); `action` is the polkit action it needs.
enum AuthorizationRefusal: Error, Sendable, Equatable {
    /// The bus would not say who the caller is (it left, say).
    case unknownCaller
    /// polkit did not answer: refused, fail closed.
    case polkitSilent(action: String)
    /// polkit's answer has not the shape CheckAuthorization replies with.
    case polkitUnreadable(action: String)
    /// polkit would allow it after authentication, which the caller's message did not allow.
    case needsAuthentication(action: String)
    case notAuthorized(action: String)

    var message: String {
        switch self {
        case .unknownCaller: "Cannot tell who is calling."
        case .polkitSilent(let action): "Authorization is not available (polkit does not answer): \(action)."
        case .polkitUnreadable(let action): "polkit gave an answer glassd cannot read: \(action)."
        case .needsAuthentication(let action): "Interactive authentication required: \(action)."
        case .notAuthorized(let action): "Not authorized: \(action)."
        }
    }
}
