#!/usr/bin/env python3
"""An RFC 8441 server that is not Courier: Hypercorn (an ASGI server whose HTTP/2 side
announces SETTINGS_ENABLE_CONNECT_PROTOCOL and serves WebSockets as extended-CONNECT
streams), for interop tests.

    hypercorn_peer.py --cert CHAIN.pem --key KEY.pem
        Serves on 127.0.0.1 over TLS (h2 and http/1.1 by ALPN), prints "PORT <n>" once
        listening, and runs until it is terminated. Any HTTP request gets 200 "ok <version>".
        A WebSocket at any path echoes every message, and says first which HTTP version
        carried its handshake ("http/2" or "http/1.1"); "close:CODE:REASON" closes with that
        code and reason.
"""
import argparse
import asyncio
import socket

from hypercorn.asyncio import serve
from hypercorn.config import Config


async def app(scope, receive, send):
    if scope["type"] == "http":
        body = f"ok {scope['http_version']}".encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    elif scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": f"http/{scope['http_version']}"})
        while True:
            event = await receive()
            if event["type"] == "websocket.disconnect":
                return
            text = event.get("text")
            if text is not None and text.startswith("close:"):
                _, code, reason = text.split(":", 2)
                await send({"type": "websocket.close", "code": int(code), "reason": reason})
                return
            if text is not None:
                await send({"type": "websocket.send", "text": text})
            else:
                await send({"type": "websocket.send", "bytes": event.get("bytes") or b""})
    elif scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    config = Config()
    config.bind = [f"fd://{listener.fileno()}"]
    config.certfile = arguments.cert
    config.keyfile = arguments.key
    config.alpn_protocols = ["h2", "http/1.1"]
    config.accesslog = None
    config.errorlog = "-"
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
