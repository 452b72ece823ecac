import CourierEngine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a task is made with besides its request and body: the caller's blocks and the options
/// of the task-creating method that made it. Everything is optional.
struct TaskSetup: Sendable {
    typealias Completion = @Sendable (HTTPURLResponse?, (any Sendable)?, (any Error)?) -> Void

    var uploadProgress: (@Sendable (Progress) -> Void)?
    var downloadProgress: (@Sendable (Progress) -> Void)?
    var completion: Completion?
    /// A serializer for this task only (the async typed API), instead of the manager's.
    var serializer: (any ResponseSerializer)?
    /// The download this task resumes.
    var resumeData: DownloadResumeData?
    /// Makes the body again for a redirect or retry when it can't be replayed (a multipart
    /// form re-reads its parts).
    var bodyFactory: (@Sendable () -> RequestBody?)?
    /// Where the end of the task (serialization, completion, notification) runs instead of the
    /// processing and completion queues: the async shape hands it to the awaiting Swift task.
    var finisher: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// The task's caller reads the response head, not an `HTTPURLResponse` (the `HTTPRequest`
    /// entry point): the end of the task skips the serializer, hands the raw body as the
    /// object and makes no `HTTPURLResponse` unless a monitor needs one.
    var keepsEngineHead = false
    /// Whether ``completion`` looks at its `HTTPURLResponse` argument. AFNetworking's success
    /// and failure blocks don't (they get the task, whose `response` is made if read): then the
    /// end of the task makes none for a built-in serializer (it reads the head) and passes nil.
    var completionReadsResponse = true
}
