@testable import Courier
import Testing

/// The rtnetlink encoder and decoder, with bytes laid out by hand (host byte order, as netlink
/// is; these machines are little-endian), and the rule from kernel answers to flags.
@Suite struct NetlinkCodecTests {
    private static func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    private static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

    private static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let bytes = Self.le16(UInt16(4 + value.count)) + Self.le16(type) + value
        return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    private static func message(type: UInt16, sequence: UInt32, _ payload: [UInt8]) -> [UInt8] {
        Self.le32(UInt32(16 + payload.count)) + Self.le16(type) + Self.le16(0) + Self.le32(sequence) + Self.le32(4242) + payload
    }

    @Test func routeRequestIsAnRTMGetRouteWithRTADst() throws {
        let address = try #require(ReachabilityAddress(literal: "10.200.0.2"))
        let bytes = NetlinkCodec.routeRequest(to: address, sequence: 7)
        let expected: [UInt8] =
            Self.le32(36) + Self.le16(26) + Self.le16(1) + Self.le32(7) + Self.le32(0)  // nlmsghdr: RTM_GETROUTE, NLM_F_REQUEST
            + [2, 32, 0, 0, 0, 0, 0, 0] + Self.le32(0)  // rtmsg: AF_INET, dst_len 32
            + Self.le16(8) + Self.le16(1) + [10, 200, 0, 2]  // RTA_DST
        #expect(bytes == expected)

        let six = try #require(ReachabilityAddress(literal: "2001:db8::1"))
        let request = NetlinkCodec.routeRequest(to: six, sequence: 8)
        #expect(request.count == 16 + 12 + 20)
        #expect(request[16] == 10 && request[17] == 128)  // AF_INET6, /128
        #expect(Array(request[32...]) == [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1])
    }

    @Test func linkAndDumpRequests() {
        let link = NetlinkCodec.linkRequest(index: 3, sequence: 9)
        #expect(link == Self.le32(32) + Self.le16(18) + Self.le16(1) + Self.le32(9) + Self.le32(0) + [0, 0] + Self.le16(0) + Self.le32(3) + Self.le32(0) + Self.le32(0))
        let dump = NetlinkCodec.routeDumpRequest(family: .ipv6, sequence: 10)
        #expect(dump == Self.le32(28) + Self.le16(26) + Self.le16(0x301) + Self.le32(10) + Self.le32(0) + [10, 0, 0, 0, 0, 0, 0, 0] + Self.le32(0))
    }

    @Test func decodesARouteAnswer() throws {
        let rtmsg: [UInt8] = [2, 0, 0, 0, 254, 3, 0, 1] + Self.le32(0)  // AF_INET /0, main table, unicast
        let payload = rtmsg + Self.attribute(15, Self.le32(254)) + Self.attribute(6, Self.le32(100))
            + Self.attribute(5, [10, 200, 0, 2]) + Self.attribute(4, Self.le32(3))
        let datagram = Self.message(type: 24, sequence: 5, payload)
        let messages = try NetlinkCodec.messages(in: datagram)
        #expect(messages.count == 1)
        #expect(messages.first?.sequence == 5)
        let reply = try NetlinkCodec.reply(try #require(messages.first))
        #expect(
            reply
                == .route(
                    RouteAnswer(
                        type: 1, outputInterface: 3, hasGateway: true, destinationLength: 0, table: 254, priority: 100)))
    }

    @Test func decodesMultipathNextHopsAndSkipsDeadOnes() throws {
        func hop(flags: UInt8, interface: UInt32, gateway: Bool) -> [UInt8] {
            let attributes = gateway ? Self.attribute(5, [10, 0, 0, 1]) : []
            return Self.le16(UInt16(8 + attributes.count)) + [flags, 0] + Self.le32(interface) + attributes
        }
        let hops = hop(flags: 0, interface: 4, gateway: true) + hop(flags: 1, interface: 5, gateway: true)
            + hop(flags: 0, interface: 6, gateway: false)
        let payload: [UInt8] = [2, 0, 0, 0, 254, 3, 0, 1] + Self.le32(0) + Self.attribute(9, hops)
        let reply = try NetlinkCodec.reply(try #require(NetlinkCodec.messages(in: Self.message(type: 24, sequence: 1, payload)).first))
        guard case .route(let route) = reply else {
            Issue.record("not a route: \(reply)")
            return
        }
        #expect(route.nextHops == [.init(outputInterface: 4, hasGateway: true), .init(outputInterface: 6, hasGateway: false)])
        #expect(route.paths.map(\.outputInterface) == [4, 6])
        #expect(route.paths.map(\.hasGateway) == [true, false])
    }

    @Test func decodesALinkWithNameOperStateAndKind() throws {
        let ifinfo: [UInt8] = [0, 0] + Self.le16(1) + Self.le32(3) + Self.le32(0x11043) + Self.le32(0)
        let linkInfo = Self.attribute(1, Array("veth".utf8) + [0])
        let payload = ifinfo + Self.attribute(3, Array("v0".utf8) + [0]) + Self.attribute(16, [6])
            + Self.attribute(18 | 0x8000, linkInfo)  // NLA_F_NESTED is masked off
        let reply = try NetlinkCodec.reply(try #require(NetlinkCodec.messages(in: Self.message(type: 16, sequence: 2, payload)).first))
        #expect(reply == .link(LinkInfo(index: 3, hardwareType: 1, flags: 0x11043, name: "v0", operState: 6, kind: "veth")))
    }

    @Test func decodesErrorsDoneAndOtherMessages() throws {
        let enetunreach: Int32 = -101
        let error = Self.message(type: 2, sequence: 3, Self.le32(UInt32(bitPattern: enetunreach)) + [UInt8](repeating: 0, count: 16))
        let done = Self.message(type: 3, sequence: 3, Self.le32(0))
        let address = Self.message(type: 20, sequence: 0, [2, 24, 0, 0] + Self.le32(3))
        let messages = try NetlinkCodec.messages(in: error + done + address)
        #expect(try messages.map { try NetlinkCodec.reply($0) } == [.error(101), .done, .other(20)])
        #if os(Linux)
        #expect(ReachabilityMonitor.isRelevant(20) && ReachabilityMonitor.isRelevant(24) && ReachabilityMonitor.isRelevant(16))
        #expect(!ReachabilityMonitor.isRelevant(3) && !ReachabilityMonitor.isRelevant(28))  // done, RTM_NEWNEIGH
        #endif
    }

    @Test func malformedBytesAreRefusedWithTheReason() throws {
        // A header that claims more bytes than there are.
        var lying = Self.message(type: 24, sequence: 1, [UInt8](repeating: 0, count: 12))
        lying.replaceSubrange(0..<4, with: Self.le32(4096))
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: lying) }
        // A length below the header's own size.
        var tiny = Self.message(type: 24, sequence: 1, [])
        tiny.replaceSubrange(0..<4, with: Self.le32(8))
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: tiny) }
        // Trailing bytes too few for a header.
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: Self.message(type: 3, sequence: 1, []) + [1, 2, 3]) }
        // A route message shorter than struct rtmsg, an attribute running past its message.
        let short = try #require(NetlinkCodec.messages(in: Self.message(type: 24, sequence: 1, [2, 0, 0, 0])).first)
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(short) }
        let overrun = [2, 0, 0, 0, 254, 3, 0, 1] + Self.le32(0) + Self.le16(200) + Self.le16(4) + Self.le32(3)
        let message = try #require(NetlinkCodec.messages(in: Self.message(type: 24, sequence: 1, overrun)).first)
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(message) }
        // RTA_OIF of the wrong size.
        let badOIF = [2, 0, 0, 0, 254, 3, 0, 1] + Self.le32(0) + Self.attribute(4, [1, 2])
        let bad = try #require(NetlinkCodec.messages(in: Self.message(type: 24, sequence: 1, badOIF)).first)
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(bad) }
        #expect(try NetlinkCodec.messages(in: []) == [])
    }

    // MARK: - From answers to flags

    private static let upEthernet = LinkInfo(index: 3, hardwareType: 1, flags: 0x11043, name: "eth0", operState: 6, kind: nil)

    @Test func aRouteOutOfAnUsableLinkIsReachable() {
        let direct = RouteAnswer(type: 1, outputInterface: 3, hasGateway: false)
        #expect(RouteReachability.snapshot(route: direct, link: Self.upEthernet) == .init(flags: [.reachable, .isDirect], interfaceName: "eth0"))
        let viaGateway = RouteAnswer(type: 1, outputInterface: 3, hasGateway: true)
        #expect(RouteReachability.snapshot(route: viaGateway, link: Self.upEthernet) == .init(flags: [.reachable], interfaceName: "eth0"))
        let local = RouteAnswer(type: 2, outputInterface: 1, hasGateway: false)
        let loopback = LinkInfo(index: 1, hardwareType: 772, flags: 0x10049, name: "lo", operState: 0, kind: nil)
        #expect(
            RouteReachability.snapshot(route: local, link: loopback)
                == .init(flags: [.reachable, .isLocalAddress, .isDirect], interfaceName: "lo"))
    }

    @Test func noRouteADownLinkOrAnUnreachableRouteIsNotReachable() {
        let route = RouteAnswer(type: 1, outputInterface: 3, hasGateway: false)
        #expect(RouteReachability.snapshot(route: nil, link: Self.upEthernet) == .notReachable)
        #expect(RouteReachability.snapshot(route: route, link: nil) == .notReachable)
        var noCarrier = Self.upEthernet
        noCarrier.flags = 0x1003  // UP, no LOWER_UP
        noCarrier.operState = 3  // LOWERLAYERDOWN
        #expect(RouteReachability.snapshot(route: route, link: noCarrier) == .notReachable)
        var adminDown = Self.upEthernet
        adminDown.flags = 0x10002
        #expect(RouteReachability.snapshot(route: route, link: adminDown) == .notReachable)
        var dormant = Self.upEthernet
        dormant.operState = 5
        #expect(RouteReachability.snapshot(route: route, link: dormant) == .notReachable)
        for type: UInt8 in [3, 5, 6, 7, 8, 9] {  // broadcast, multicast, blackhole, unreachable, prohibit, throw
            #expect(RouteReachability.snapshot(route: RouteAnswer(type: type, outputInterface: 3, hasGateway: false), link: Self.upEthernet) == .notReachable)
        }
        // The route names another link than the one read.
        #expect(RouteReachability.snapshot(route: RouteAnswer(type: 1, outputInterface: 4, hasGateway: false), link: Self.upEthernet) == .notReachable)
    }

    @Test func cellularLinksAreWWAN() {
        let route = RouteAnswer(type: 1, outputInterface: 3, hasGateway: false)
        var ppp = Self.upEthernet
        ppp.hardwareType = 512
        ppp.name = "ppp0"
        #expect(RouteReachability.snapshot(route: route, link: ppp).flags == [.reachable, .isDirect, .isWWAN, .transientConnection])
        var rawIP = Self.upEthernet
        rawIP.hardwareType = 519
        #expect(RouteReachability.snapshot(route: route, link: rawIP).status == .reachableViaWWAN)
        var wwanKind = Self.upEthernet
        wwanKind.kind = "wwan"
        #expect(RouteReachability.snapshot(route: route, link: wwanKind).status == .reachableViaWWAN)
        var wwanName = Self.upEthernet
        wwanName.name = "wwan0"
        #expect(RouteReachability.snapshot(route: route, link: wwanName).status == .reachableViaWWAN)
        var wifi = Self.upEthernet
        wifi.name = "wlan0"
        #expect(RouteReachability.snapshot(route: route, link: wifi).status == .reachableViaWiFi)
    }

    @Test func defaultRoutesAreUnicastZeroLengthOutsideTheLocalTableByMetric() {
        let routes = [
            RouteAnswer(type: 1, outputInterface: 3, hasGateway: true, destinationLength: 0, table: 254, priority: 600),
            RouteAnswer(type: 1, outputInterface: 4, hasGateway: false, destinationLength: 24, table: 254, priority: 0),
            RouteAnswer(type: 7, outputInterface: 1, hasGateway: false, destinationLength: 0, table: 254, priority: 0),
            RouteAnswer(type: 2, outputInterface: 1, hasGateway: false, destinationLength: 0, table: 255, priority: 0),
            RouteAnswer(type: 1, outputInterface: 5, hasGateway: true, destinationLength: 0, table: 254, priority: 100),
        ]
        #expect(RouteReachability.defaultRoutes(in: routes).map(\.outputInterface) == [5, 3])
    }

    @Test func addressLiterals() throws {
        #expect(ReachabilityAddress(literal: "127.0.0.1")?.bytes == [127, 0, 0, 1])
        #expect(ReachabilityAddress(literal: "127.0.0.1")?.isLoopback == true)
        #expect(ReachabilityAddress(literal: "[::1]")?.isLoopback == true)
        #expect(ReachabilityAddress(literal: "2001:db8::1")?.description == "2001:db8::1")
        #expect(ReachabilityAddress(literal: "10.1.2.3")?.description == "10.1.2.3")
        for bad in ["", "1.2.3", "1.2.3.4.5", "::g", "localhost", "[1.2.3.4", "fe80::1%lo"] {
            #expect(ReachabilityAddress(literal: bad) == nil, "\(bad)")
        }
        // inet_pton stops at a NUL: what follows it must not be silently dropped.
        for bad in ["127.0.0.1\u{0}", "10.0.0.1\u{0}.evil.example", "::1\u{0}x", "[::1]\u{0}"] {
            #expect(ReachabilityAddress(literal: bad) == nil, "\(bad.debugDescription)")
            #expect(!ReachabilityTarget.isValidHostName(bad), "\(bad.debugDescription)")
        }
        #expect(!ReachabilityTarget.isValidHostName("example\u{0}.com"))
        #expect(!ReachabilityTarget.isValidHostName(String(repeating: "a", count: 1 << 20)))
    }

    @Test func lyingLengthsAreRefusedNeverTrapped() throws {
        // nlmsg_len of 0, 15 and UInt32.max; a header cut short.
        for claimed: UInt32 in [0, 15, .max] {
            var bytes = Self.message(type: 24, sequence: 1, [UInt8](repeating: 0, count: 12))
            bytes.replaceSubrange(0..<4, with: Self.le32(claimed))
            #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: bytes) }
        }
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: Array(Self.message(type: 3, sequence: 1, []).prefix(15))) }
        // A second message whose length lies, after a good one.
        let two = Self.message(type: 3, sequence: 1, []) + Self.le32(.max) + [UInt8](repeating: 0, count: 12)
        #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.messages(in: two) }
        // An unpadded last message is accepted (its alignment runs past the end, not into garbage).
        #expect(try NetlinkCodec.messages(in: Self.message(type: 16, sequence: 1, [1, 2, 3])).count == 1)

        let rtmsg: [UInt8] = [2, 0, 0, 0, 254, 3, 0, 1] + Self.le32(0)
        func route(_ attributes: [UInt8]) throws -> NetlinkMessage {
            try #require(NetlinkCodec.messages(in: Self.message(type: 24, sequence: 1, rtmsg + attributes)).first)
        }
        // rta_len 0 (would loop forever if it were trusted), 3, one past the end; a truncated attribute header is padding.
        for length: UInt16 in [0, 3, 9] {
            let message = try route(Self.le16(length) + Self.le16(4) + Self.le32(7))
            #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(message) }
        }
        #expect(try NetlinkCodec.reply(route([8, 0, 4])) == .route(RouteAnswer(type: 1, outputInterface: nil, hasGateway: false, destinationLength: 0, table: 254)))
        // RTA_MULTIPATH whose next hop claims 0 bytes, more than there are, or carries an overrunning attribute.
        for hop in [Self.le16(0) + [0, 0] + Self.le32(3), Self.le16(64) + [0, 0] + Self.le32(3),
                    Self.le16(16) + [0, 0] + Self.le32(3) + Self.le16(40) + Self.le16(5) + Self.le32(0)] {
            let message = try route(Self.attribute(9, hop))
            #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(message) }
        }
        // A link whose IFLA_LINKINFO nests an attribute overrunning it; IFLA_OPERSTATE empty.
        let ifinfomsg = [UInt8](repeating: 0, count: 16)
        for attribute in [Self.attribute(18, Self.le16(200) + Self.le16(1) + Array("veth".utf8)), Self.attribute(16, [])] {
            let link = try #require(NetlinkCodec.messages(in: Self.message(type: 16, sequence: 1, ifinfomsg + attribute)).first)
            #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(link) }
        }
        // An NLMSG_ERROR too short for its code, and one carrying Int32.min.
        for payload in [[1, 2, 3], Self.le32(0x8000_0000)] {
            let error = try #require(NetlinkCodec.messages(in: Self.message(type: 2, sequence: 1, payload)).first)
            #expect(throws: NetlinkDecodingError.self) { try NetlinkCodec.reply(error) }
        }
    }
}
