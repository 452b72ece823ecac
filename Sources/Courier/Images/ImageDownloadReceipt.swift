public import Foundation

/// AFNetworking's `AFImageDownloadReceipt`: names one caller's interest in a download, for
/// ``ImageDownloader/cancelTask(for:)``. Several receipts may share one task (merged requests).
public struct ImageDownloadReceipt: Sendable, Hashable {
    /// This caller's id (the `receiptID` given to ``ImageDownloader/downloadImage(for:withReceiptID:success:failure:)``).
    public let receiptID: UUID
    /// The data task doing the download, shared by every receipt for the same URL.
    public let task: SessionTask

    /// A receipt for `receiptID` on `task`.
    public init(receiptID: UUID, task: SessionTask) {
        self.receiptID = receiptID
        self.task = task
    }
}
