/// The numbers of Linux's rtnetlink ABI that reachability uses (`<linux/netlink.h>`,
/// `<linux/rtnetlink.h>`, `<linux/if.h>`, `<linux/if_arp.h>`). Glibc's Swift module does not
/// carry these headers; the values are part of the kernel's stable user-space ABI.
enum RouteNetlink {
    static let addressFamily: Int32 = 16  // AF_NETLINK
    static let protocolRoute: Int32 = 0  // NETLINK_ROUTE

    /// Legacy multicast group bits for `sockaddr_nl.nl_groups`: links, IPv4/IPv6 addresses and
    /// routes.
    static let groupLink: UInt32 = 0x1  // RTMGRP_LINK
    static let groupIPv4Address: UInt32 = 0x10  // RTMGRP_IPV4_IFADDR
    static let groupIPv4Route: UInt32 = 0x40  // RTMGRP_IPV4_ROUTE
    static let groupIPv6Address: UInt32 = 0x100  // RTMGRP_IPV6_IFADDR
    static let groupIPv6Route: UInt32 = 0x400  // RTMGRP_IPV6_ROUTE
    static let reachabilityGroups = groupLink | groupIPv4Address | groupIPv4Route | groupIPv6Address | groupIPv6Route

    // nlmsghdr
    static let headerSize = 16
    static let messageNoop: UInt16 = 1
    static let messageError: UInt16 = 2
    static let messageDone: UInt16 = 3
    static let messageOverrun: UInt16 = 4
    static let flagRequest: UInt16 = 0x1
    static let flagDump: UInt16 = 0x300  // NLM_F_ROOT | NLM_F_MATCH

    // rtnetlink message types
    static let newLink: UInt16 = 16
    static let deleteLink: UInt16 = 17
    static let getLink: UInt16 = 18
    static let newAddress: UInt16 = 20
    static let deleteAddress: UInt16 = 21
    static let newRoute: UInt16 = 24
    static let deleteRoute: UInt16 = 25
    static let getRoute: UInt16 = 26

    // struct rtmsg (12 bytes) and its attributes
    static let routeMessageSize = 12
    static let routeAttributeDestination: UInt16 = 1  // RTA_DST
    static let routeAttributeOutputInterface: UInt16 = 4  // RTA_OIF
    static let routeAttributeGateway: UInt16 = 5  // RTA_GATEWAY
    static let routeAttributePriority: UInt16 = 6  // RTA_PRIORITY
    static let routeAttributeMultipath: UInt16 = 9  // RTA_MULTIPATH (struct rtnexthop list)
    static let routeAttributeTable: UInt16 = 15  // RTA_TABLE
    static let nextHopSize = 8  // struct rtnexthop
    static let nextHopDead: UInt8 = 0x1  // RTNH_F_DEAD
    static let routeAttributeVia: UInt16 = 18  // RTA_VIA

    // rtm_type
    static let routeTypeUnicast: UInt8 = 1  // RTN_UNICAST
    static let routeTypeLocal: UInt8 = 2  // RTN_LOCAL
    static let routeTableLocal: UInt32 = 255  // RT_TABLE_LOCAL

    // struct ifinfomsg (16 bytes) and its attributes
    static let linkMessageSize = 16
    static let linkAttributeName: UInt16 = 3  // IFLA_IFNAME
    static let linkAttributeOperState: UInt16 = 16  // IFLA_OPERSTATE
    static let linkAttributeLinkInfo: UInt16 = 18  // IFLA_LINKINFO (nested)
    static let linkInfoKind: UInt16 = 1  // IFLA_INFO_KIND
    /// NLA_F_NESTED and NLA_F_NET_BYTEORDER, masked off an attribute's type.
    static let attributeTypeMask: UInt16 = 0x3FFF

    // ifi_flags
    static let interfaceUp: UInt32 = 0x1  // IFF_UP
    static let interfaceLoopback: UInt32 = 0x8  // IFF_LOOPBACK
    static let interfaceRunning: UInt32 = 0x40  // IFF_RUNNING
    static let interfaceLowerUp: UInt32 = 0x10000  // IFF_LOWER_UP

    // IF_OPER_* (RFC 2863)
    static let operStateUnknown: UInt8 = 0
    static let operStateUp: UInt8 = 6

    // ifi_type (ARPHRD_*)
    static let hardwarePPP: UInt16 = 512
    static let hardwareRawIP: UInt16 = 519

    static let addressFamilyIPv4: UInt8 = 2  // AF_INET
    static let addressFamilyIPv6: UInt8 = 10  // AF_INET6
}
