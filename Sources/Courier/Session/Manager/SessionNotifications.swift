public import Foundation

/// AFNetworking's notification names, with their exact string values, posted on
/// `NotificationCenter.default`.
///
/// One task's resume, suspend and completion notifications arrive in the order of the state
/// changes that caused them, never while the task's lock is held (an observer may call the task
/// back). When two threads post for the same task at once, the second one's notification is
/// handed to the first and posted by it, after the one it is posting: so an observer must not
/// block inside one of a task's notifications waiting for a later one of the same task (that
/// one waits behind it). Different tasks' notifications are not ordered with each other.
extension Notification.Name {
    /// A task was resumed (object: the task). `AFNetworkingTaskDidResumeNotification`.
    public static let courierTaskDidResume = Notification.Name("com.alamofire.networking.task.resume")
    /// A task was suspended (object: the task). `AFNetworkingTaskDidSuspendNotification`.
    public static let courierTaskDidSuspend = Notification.Name("com.alamofire.networking.task.suspend")
    /// A task completed, after its completion handler (object: the task; userInfo: the
    /// `SessionNotificationKey`s). `AFNetworkingTaskDidCompleteNotification`.
    public static let courierTaskDidComplete = Notification.Name("com.alamofire.networking.task.complete")
    /// The session was invalidated (object: the manager). `AFURLSessionDidInvalidateNotification`.
    public static let courierSessionDidInvalidate = Notification.Name("com.alamofire.networking.session.invalidate")
    /// A download was moved to its destination (object: the task).
    public static let courierDownloadTaskDidMoveFileSuccessfully = Notification.Name(
        "com.alamofire.networking.session.download.file-manager-succeed"
    )
    /// A download could not be moved to its destination (object: the task; userInfo: the error).
    public static let courierDownloadTaskDidFailToMoveFile = Notification.Name(
        "com.alamofire.networking.session.download.file-manager-error"
    )
}

/// The userInfo keys of ``Foundation/NSNotification/Name/courierTaskDidComplete``, with
/// AFNetworking's string values.
public enum SessionNotificationKey {
    /// The response serializer that ran.
    public static let responseSerializer = "com.alamofire.networking.task.complete.responseserializer"
    /// The response data (not for download tasks).
    public static let responseData = "com.alamofire.networking.complete.finish.responsedata"
    /// The serialized response object, when there is one.
    public static let serializedResponse = "com.alamofire.networking.task.complete.serializedresponse"
    /// The download's final file URL.
    public static let assetPath = "com.alamofire.networking.task.complete.assetpath"
    /// The transport or serialization error.
    public static let error = "com.alamofire.networking.task.complete.error"
    /// The task's `EngineMetrics`.
    public static let metrics = "com.alamofire.networking.complete.sessiontaskmetrics"
}
