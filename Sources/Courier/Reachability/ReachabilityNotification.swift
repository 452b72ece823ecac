public import Foundation

extension Notification.Name {
    /// Posted on the manager's `callbackQueue` after each status change, right after the
    /// status-change block ran: AFNetworking's `AFNetworkingReachabilityDidChangeNotification`
    /// (`"com.alamofire.networking.reachability.change"`). The object is the
    /// ``NetworkReachabilityManager``; `userInfo[NetworkReachabilityManager.statusUserInfoKey]`
    /// holds the new ``NetworkReachabilityManager/Status``.
    public static let reachabilityDidChange = Notification.Name("com.alamofire.networking.reachability.change")
}

extension NetworkReachabilityManager {
    /// The `userInfo` key of ``Foundation/NSNotification/Name/reachabilityDidChange`` that holds the
    /// new ``Status``: AFNetworking's `AFNetworkingReachabilityNotificationStatusItem`.
    public static let statusUserInfoKey = "AFNetworkingReachabilityNotificationStatusItem"
}
