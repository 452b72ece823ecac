#!/usr/bin/env python3
"""A WebSocket peer that is not Courier: the Python `websockets` library, for interop tests.

    websockets_peer.py server [--cert CHAIN.pem --key KEY.pem]
        Serves an echo endpoint (permessage-deflate on, as the library's default) on
        127.0.0.1, prints "PORT <n>" once listening, and runs until it is terminated.
        Echoes every message; "close:CODE:REASON" closes with that code and reason.

    websockets_peer.py client URL
        Connects to URL, sends a text and a binary message and checks their echoes, pings,
        closes with 1000; prints "ok" and exits 0, or prints what failed and exits 1.
"""
import asyncio
import ssl
import sys

import websockets


async def echo(socket):
    async for message in socket:
        if isinstance(message, str) and message.startswith("close:"):
            _, code, reason = message.split(":", 2)
            await socket.close(int(code), reason)
            return
        await socket.send(message)


async def serve(cert, key):
    context = None
    if cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
    async with websockets.serve(echo, "127.0.0.1", 0, ssl=context, max_size=2**24) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        print(f"PORT {port}", flush=True)
        await asyncio.Future()


async def client(url):
    async with websockets.connect(url, compression="deflate") as socket:
        await socket.send("héllo from python")
        text = await socket.recv()
        if text != "héllo from python":
            raise SystemExit(f"text echo was {text!r}")
        payload = bytes(range(256)) * 300
        await socket.send(payload)
        data = await socket.recv()
        if data != payload:
            raise SystemExit(f"binary echo was {len(data)} bytes")
        pong = await socket.ping(b"interop")
        await asyncio.wait_for(pong, 10)
        extensions = socket.response.headers.get("Sec-WebSocket-Extensions", "")
        await socket.close(1000, "done")
    print(f"ok extensions={extensions!r}")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "server":
        cert = key = None
        if "--cert" in sys.argv:
            cert = sys.argv[sys.argv.index("--cert") + 1]
            key = sys.argv[sys.argv.index("--key") + 1]
        asyncio.run(serve(cert, key))
    elif len(sys.argv) == 3 and sys.argv[1] == "client":
        asyncio.run(client(sys.argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
