/// The block API's `success` and `failure` callbacks (`HTTPSessionManager.get`, `post`…,
/// whatever task type they pass) recording into a ``CompletionRecorder``: the object, or the
/// error; no response.
extension CompletionRecorder {
    func success<Task>() -> @Sendable (Task, (any Sendable)?) -> Void {
        let handler = self.handler
        return { _, object in handler(nil, object, nil) }
    }

    func failure<Task>() -> @Sendable (Task, any Error) -> Void {
        let handler = self.handler
        return { _, error in handler(nil, nil, error) }
    }
}
