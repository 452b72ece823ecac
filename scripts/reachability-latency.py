#!/usr/bin/env python3
"""Measures `courier reachability --watch` against the real kernel (issue 12's closing note).

In a network namespace of its own (root needed; iproute2), with a veth v0/v1 up and
10.200.0.1/24 on v0, it runs `courier reachability --watch --json` inside the namespace and
flips the default route 100 times (`route add default dev v0` / `route del default`, written
to one `ip -batch -` process so no process start sits in the measurement). The delay is from
just before the command is written to `ip` until courier's line for the change is read: the
kernel's event, courier's burst settling (10 ms quiet), the route/link lookups, the delivery
on the callback queue and the pipe both ways. Then it leaves the monitor idle for 10 s and
reads the courier process's CPU ticks (utime+stime in /proc/PID/stat) before and after.

Usage: scripts/reachability-latency.py [--courier .build/debug/courier] [--changes 100] [--idle 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid


def ip(*arguments):
    subprocess.run(["ip", *arguments], check=True)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def cpu_ticks_of(pid, task):
    try:
        with open(f"/proc/{pid}/task/{task}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except FileNotFoundError:
        return 0


def thread_name(pid, task):
    try:
        with open(f"/proc/{pid}/task/{task}/comm") as comm:
            return comm.read().strip() + "/" + task
    except FileNotFoundError:
        return "exited/" + task


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--courier", default=".build/debug/courier")
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--idle", type=float, default=10.0)
    options = parser.parse_args()
    courier = os.path.abspath(options.courier)
    name = "courier-latency-" + uuid.uuid4().hex[:8]
    ip("netns", "add", name)
    watch = batch = None
    try:
        ip("-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1")
        ip("-n", name, "addr", "add", "10.200.0.1/24", "dev", "v0")
        ip("-n", name, "link", "set", "v1", "up")
        ip("-n", name, "link", "set", "v0", "up")
        watch = subprocess.Popen(
            ["ip", "netns", "exec", name, courier, "reachability", "--watch", "--json"],
            stdout=subprocess.PIPE, text=True, bufsize=1)
        first = json.loads(watch.stdout.readline())
        assert first["status"] == "notReachable", first
        batch = subprocess.Popen(["ip", "-n", name, "-force", "-batch", "-"], stdin=subprocess.PIPE, text=True, bufsize=1)
        delays = []
        for index in range(options.changes):
            adding = index % 2 == 0
            command = "route add default dev v0\n" if adding else "route del default\n"
            start = time.perf_counter()
            batch.stdin.write(command)
            batch.stdin.flush()
            line = watch.stdout.readline()
            delays.append((time.perf_counter() - start) * 1000)
            status = json.loads(line)["status"]
            expected = "reachableViaWiFi" if adding else "notReachable"
            assert status == expected, (index, line)
        # Idle: no changes, the monitor thread sleeps in poll(2).
        time.sleep(1)  # let the last delivery's work finish before the idle window opens
        tasks = os.listdir(f"/proc/{watch.pid}/task")
        before = cpu_ticks(watch.pid)
        per_thread = {task: cpu_ticks_of(watch.pid, task) for task in tasks}
        time.sleep(options.idle)
        after = cpu_ticks(watch.pid)
        busy = {thread_name(watch.pid, task): cpu_ticks_of(watch.pid, task) - ticks
                for task, ticks in per_thread.items() if cpu_ticks_of(watch.pid, task) > ticks}
        exited = [task for task in tasks if not os.path.exists(f"/proc/{watch.pid}/task/{task}")]
        threads = len(tasks)
        delays.sort()
        print(f"changes: {len(delays)} (default route added/removed alternately, namespace {name})")
        print(f"delay kernel change -> courier line: median {statistics.median(delays):.2f} ms, "
              f"p90 {delays[int(len(delays) * 0.9) - 1]:.2f} ms, max {delays[-1]:.2f} ms, min {delays[0]:.2f} ms")
        print(f"idle for {options.idle:g} s: {after - before} CPU ticks "
              f"(utime+stime, {os.sysconf('SC_CLK_TCK')} per second) in courier pid {watch.pid} ({threads} threads)"
              + (f"; threads that ran: {busy}" if busy else "")
              + (f"; {len(exited)} idle Dispatch worker threads retired meanwhile" if exited else ""))
    finally:
        if batch:
            batch.stdin.close()
            batch.wait()
        if watch:
            watch.terminate()
            watch.wait()
        subprocess.run(["ip", "netns", "del", name])


if __name__ == "__main__":
    sys.exit(main())
