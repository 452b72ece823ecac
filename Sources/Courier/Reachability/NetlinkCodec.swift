/// A malformed rtnetlink message: what was wrong with it. A real kernel never sends one; the
/// monitor treats it as "no answer" (not reachable) rather than trusting its bytes.
struct NetlinkDecodingError: Error, Equatable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One rtnetlink message: its header fields and the bytes after the header.
struct NetlinkMessage: Equatable {
    var type: UInt16
    var flags: UInt16
    var sequence: UInt32
    var portID: UInt32
    var payload: [UInt8]
}

/// A route (`RTM_NEWROUTE`): the kernel's answer to a lookup, or one entry of a dump.
struct RouteAnswer: Equatable, Sendable {
    /// One way out of a multipath route (`struct rtnexthop`).
    struct NextHop: Equatable, Sendable {
        var outputInterface: Int32
        var hasGateway: Bool
    }

    /// `rtm_type`: unicast, local, unreachable, blackhole, ...
    var type: UInt8
    /// `RTA_OIF`: the interface the route leaves by.
    var outputInterface: Int32?
    /// `RTA_GATEWAY` or `RTA_VIA`: the route goes through a gateway.
    var hasGateway: Bool
    /// `rtm_dst_len`: 0 for a default route.
    var destinationLength: UInt8 = 0
    /// `RTA_TABLE` (or `rtm_table`).
    var table: UInt32 = 0
    /// `RTA_PRIORITY` (the metric; lower wins).
    var priority: UInt32 = 0
    /// `RTA_MULTIPATH`'s live next hops (dead ones left out); empty for a single-path route.
    var nextHops: [NextHop] = []

    /// The ways out: the next hops of a multipath route, else the route's own interface.
    var paths: [RouteAnswer] {
        guard !nextHops.isEmpty else { return [self] }
        return nextHops.map { hop in
            RouteAnswer(type: type, outputInterface: hop.outputInterface, hasGateway: hop.hasGateway)
        }
    }
}

/// The kernel's description of one link (`RTM_NEWLINK`).
struct LinkInfo: Equatable, Sendable {
    var index: Int32
    /// `ifi_type` (ARPHRD_*).
    var hardwareType: UInt16
    /// `ifi_flags` (IFF_*).
    var flags: UInt32
    /// `IFLA_IFNAME`.
    var name: String?
    /// `IFLA_OPERSTATE` (IF_OPER_*).
    var operState: UInt8?
    /// `IFLA_LINKINFO`/`IFLA_INFO_KIND` (`veth`, `wwan`, `ppp`, ...).
    var kind: String?
}

/// What one reply message says.
enum NetlinkReply: Equatable {
    case route(RouteAnswer)
    case link(LinkInfo)
    /// `NLMSG_ERROR`: 0 is an acknowledgement, otherwise the positive errno.
    case error(Int32)
    case done
    /// Any other message type (events the caller does not read, noops).
    case other(UInt16)
}

/// Encodes rtnetlink requests and decodes replies and events: pure functions over bytes, in the
/// host's byte order as netlink is.
enum NetlinkCodec {
    /// An `RTM_GETROUTE` request for the route to `destination` (a FIB lookup: `ip route get`).
    static func routeRequest(to destination: ReachabilityAddress, sequence: UInt32) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: RouteNetlink.routeMessageSize)
        body[0] = destination.family == .ipv4 ? RouteNetlink.addressFamilyIPv4 : RouteNetlink.addressFamilyIPv6
        body[1] = UInt8(destination.bytes.count * 8)  // rtm_dst_len
        appendAttribute(RouteNetlink.routeAttributeDestination, destination.bytes, to: &body)
        return message(type: RouteNetlink.getRoute, flags: RouteNetlink.flagRequest, sequence: sequence, body: body)
    }

    /// An `RTM_GETROUTE` dump request: every route of `family` in every table.
    static func routeDumpRequest(family: ReachabilityAddress.Family, sequence: UInt32) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: RouteNetlink.routeMessageSize)
        body[0] = family == .ipv4 ? RouteNetlink.addressFamilyIPv4 : RouteNetlink.addressFamilyIPv6
        return message(
            type: RouteNetlink.getRoute, flags: RouteNetlink.flagRequest | RouteNetlink.flagDump, sequence: sequence,
            body: body)
    }

    /// An `RTM_GETLINK` request for the link with index `index`.
    static func linkRequest(index: Int32, sequence: UInt32) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: RouteNetlink.linkMessageSize)
        write(UInt32(bitPattern: index), into: &body, at: 4)
        return message(type: RouteNetlink.getLink, flags: RouteNetlink.flagRequest, sequence: sequence, body: body)
    }

    /// Splits a datagram into its messages, checking every length against the bytes there.
    static func messages(in datagram: [UInt8]) throws(NetlinkDecodingError) -> [NetlinkMessage] {
        var result: [NetlinkMessage] = []
        var offset = 0
        while datagram.count - offset >= RouteNetlink.headerSize {
            let length = Int(read(UInt32.self, from: datagram, at: offset))
            guard length >= RouteNetlink.headerSize, length <= datagram.count - offset else {
                throw NetlinkDecodingError(
                    "message at offset \(offset) claims \(length) bytes; \(datagram.count - offset) are there")
            }
            result.append(
                NetlinkMessage(
                    type: read(UInt16.self, from: datagram, at: offset + 4),
                    flags: read(UInt16.self, from: datagram, at: offset + 6),
                    sequence: read(UInt32.self, from: datagram, at: offset + 8),
                    portID: read(UInt32.self, from: datagram, at: offset + 12),
                    payload: Array(datagram[(offset + RouteNetlink.headerSize)..<(offset + length)])))
            offset += aligned(length)
        }
        guard offset >= datagram.count else {
            throw NetlinkDecodingError("\(datagram.count - offset) trailing bytes, too few for a message header")
        }
        return result
    }

    /// What `message` says, for the types a reachability lookup reads.
    static func reply(_ message: NetlinkMessage) throws(NetlinkDecodingError) -> NetlinkReply {
        let payload = message.payload
        switch message.type {
        case RouteNetlink.messageError:
            guard payload.count >= 4 else { throw NetlinkDecodingError("error message of \(payload.count) bytes") }
            let code = Int32(bitPattern: read(UInt32.self, from: payload, at: 0))
            guard code != Int32.min else { throw NetlinkDecodingError("error code out of range") }
            return .error(-code)
        case RouteNetlink.messageDone:
            return .done
        case RouteNetlink.newRoute:
            guard payload.count >= RouteNetlink.routeMessageSize else {
                throw NetlinkDecodingError("route message of \(payload.count) bytes")
            }
            var answer = RouteAnswer(
                type: payload[7], outputInterface: nil, hasGateway: false, destinationLength: payload[1],
                table: UInt32(payload[4]))
            for (type, value) in try attributes(in: payload, from: RouteNetlink.routeMessageSize) {
                switch type {
                case RouteNetlink.routeAttributeOutputInterface:
                    guard value.count == 4 else { throw NetlinkDecodingError("RTA_OIF of \(value.count) bytes") }
                    answer.outputInterface = Int32(bitPattern: read(UInt32.self, from: value, at: 0))
                case RouteNetlink.routeAttributeGateway, RouteNetlink.routeAttributeVia:
                    answer.hasGateway = true
                case RouteNetlink.routeAttributeTable:
                    guard value.count == 4 else { throw NetlinkDecodingError("RTA_TABLE of \(value.count) bytes") }
                    answer.table = read(UInt32.self, from: value, at: 0)
                case RouteNetlink.routeAttributePriority:
                    guard value.count == 4 else { throw NetlinkDecodingError("RTA_PRIORITY of \(value.count) bytes") }
                    answer.priority = read(UInt32.self, from: value, at: 0)
                case RouteNetlink.routeAttributeMultipath:
                    answer.nextHops = try nextHops(in: value)
                default:
                    break
                }
            }
            return .route(answer)
        case RouteNetlink.newLink:
            guard payload.count >= RouteNetlink.linkMessageSize else {
                throw NetlinkDecodingError("link message of \(payload.count) bytes")
            }
            var link = LinkInfo(
                index: Int32(bitPattern: read(UInt32.self, from: payload, at: 4)),
                hardwareType: read(UInt16.self, from: payload, at: 2),
                flags: read(UInt32.self, from: payload, at: 8))
            for (type, value) in try attributes(in: payload, from: RouteNetlink.linkMessageSize) {
                switch type {
                case RouteNetlink.linkAttributeName:
                    link.name = string(value)
                case RouteNetlink.linkAttributeOperState:
                    guard value.count == 1 else { throw NetlinkDecodingError("IFLA_OPERSTATE of \(value.count) bytes") }
                    link.operState = value[0]
                case RouteNetlink.linkAttributeLinkInfo:
                    for (infoType, infoValue) in try attributes(in: value, from: 0)
                    where infoType == RouteNetlink.linkInfoKind {
                        link.kind = string(infoValue)
                    }
                default:
                    break
                }
            }
            return .link(link)
        default:
            return .other(message.type)
        }
    }

    /// The attributes (type with the nested/byte-order bits masked off, value) from `start`.
    static func attributes(in bytes: [UInt8], from start: Int) throws(NetlinkDecodingError) -> [(UInt16, [UInt8])] {
        var result: [(UInt16, [UInt8])] = []
        var offset = start
        while bytes.count - offset >= 4 {
            let length = Int(read(UInt16.self, from: bytes, at: offset))
            let type = read(UInt16.self, from: bytes, at: offset + 2) & RouteNetlink.attributeTypeMask
            guard length >= 4, length <= bytes.count - offset else {
                throw NetlinkDecodingError(
                    "attribute \(type) at offset \(offset) claims \(length) bytes; \(bytes.count - offset) are there")
            }
            result.append((type, Array(bytes[(offset + 4)..<(offset + length)])))
            offset += aligned(length)
        }
        return result
    }

    /// The live next hops of an `RTA_MULTIPATH` value.
    private static func nextHops(in bytes: [UInt8]) throws(NetlinkDecodingError) -> [RouteAnswer.NextHop] {
        var result: [RouteAnswer.NextHop] = []
        var offset = 0
        while bytes.count - offset >= RouteNetlink.nextHopSize {
            let length = Int(read(UInt16.self, from: bytes, at: offset))
            guard length >= RouteNetlink.nextHopSize, length <= bytes.count - offset else {
                throw NetlinkDecodingError(
                    "next hop at offset \(offset) claims \(length) bytes; \(bytes.count - offset) are there")
            }
            let flags = bytes[offset + 2]
            let interface = Int32(bitPattern: read(UInt32.self, from: bytes, at: offset + 4))
            let hopAttributes = try attributes(
                in: Array(bytes[offset..<(offset + length)]), from: RouteNetlink.nextHopSize)
            let hasGateway = hopAttributes.contains {
                $0.0 == RouteNetlink.routeAttributeGateway || $0.0 == RouteNetlink.routeAttributeVia
            }
            if flags & RouteNetlink.nextHopDead == 0 {
                result.append(RouteAnswer.NextHop(outputInterface: interface, hasGateway: hasGateway))
            }
            offset += aligned(length)
        }
        return result
    }

    // MARK: - Bytes

    private static func message(type: UInt16, flags: UInt16, sequence: UInt32, body: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: RouteNetlink.headerSize)
        write(UInt32(RouteNetlink.headerSize + body.count), into: &bytes, at: 0)
        write(type, into: &bytes, at: 4)
        write(flags, into: &bytes, at: 6)
        write(sequence, into: &bytes, at: 8)
        // nlmsg_pid 0: the kernel fills in our port.
        return bytes + body
    }

    private static func appendAttribute(_ type: UInt16, _ value: [UInt8], to bytes: inout [UInt8]) {
        var header = [UInt8](repeating: 0, count: 4)
        write(UInt16(4 + value.count), into: &header, at: 0)
        write(type, into: &header, at: 2)
        bytes += header + value
        bytes += [UInt8](repeating: 0, count: aligned(4 + value.count) - (4 + value.count))
    }

    /// Netlink pads messages and attributes to 4 bytes.
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }

    private static func read<T: FixedWidthInteger>(_: T.Type, from bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { raw in
            for index in 0..<MemoryLayout<T>.size { raw[index] = bytes[offset + index] }
        }
        return value
    }

    private static func write<T: FixedWidthInteger>(_ value: T, into bytes: inout [UInt8], at offset: Int) {
        withUnsafeBytes(of: value) { raw in
            for index in 0..<MemoryLayout<T>.size { bytes[offset + index] = raw[index] }
        }
    }

    /// A NUL-terminated string attribute (the terminator and anything after it dropped).
    private static func string(_ value: [UInt8]) -> String {
        String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
    }
}
