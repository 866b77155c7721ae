#!/usr/bin/python3
"""A second-language InventorySession v4 requester (issue 26 item 7).

Written from the repository's documents and the .proto files only, never from the Java code:
docs/protocol.md (the wire contract, session behaviour, transcript digest, scope digest, membership a requester
needs), docs/operations.md section 2 (the member record's bytes and the registration transaction) and
orbitkv.inventory/src/main/proto/orbitkv/inventory/v4/inventory_session.proto. It imports no Java code and
runs no JVM.

What it does:
  * registers as a requester-only member (MEM-11: the record's seventh line "role = requester") through etcd's
    v3 JSON gateway on loopback, keeps its lease alive, and watches the member prefix;
  * opens one InventorySession to every serving member (the Managers), bootstraps (snapshot, replay, commit
    with the transcript digest checked), then follows deltas, acknowledging what it consumed;
  * answers commands on standard input, one per line:
      dump   print one line "INDEX <json>": per source node, its incarnation, installed view, watermark, the
             last head it heard of and the installed residences [namespace, key hex, medium, sequence, size]
             in resident-map order
      quit   deregister (revoke the lease) and exit 0
Diagnostics go to standard error.

Generated message classes: the caller passes --pb-dir, a directory holding inventory_session_pb2.py generated
from the .proto at test time (protoc --python_out); the gRPC call is the generic stream-stream call on
/orbitkv.inventory.v4.InventorySession/Session, so no service stub is needed.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import queue
import random
import sys
import threading
import time
import urllib.parse
import uuid

PROTOCOL = "orbitkv/inventory-stream/v4"
METHOD = "/orbitkv.inventory.v4.InventorySession/Session"
LEASE_TTL_S = 15            # operations.md section 2, step 3
RENEW_INTERVAL_S = 2.0      # step 5
FENCE_MARGIN_S = 3.0        # step 5: expired at last confirmed renewal send + 15 s - 3 s
LIVENESS_INTERVAL_S = 1.0   # protocol.md: livenessIntervalMs; the receive deadline is three of them
RECEIVE_WINDOW = 8 << 20    # protocol.md: receive window 8 MiB (at least the source's 1 MiB frame bound)
MAX_MESSAGE = (1 << 20) + (64 << 10)  # the transport bound: max(frame bounds) + 64 KiB
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.05, 5.0
MEDIUM_NAMES = {1: "DRAM", 2: "SSD"}

pb = None  # inventory_session_pb2, imported in main()


def log(*parts):
    print("requester:", *parts, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------- digests

def scope_digest_all():
    """SES-7: SHA-256 of 'orbitkv.scope-digest' 0x00, version 0x01, kind 0x00 (AllNamespaces)."""
    return hashlib.sha256(b"orbitkv.scope-digest\x00\x01\x00").digest()


M64 = (1 << 64) - 1


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xff51afd7ed558ccd) & M64
    k ^= k >> 33
    k = (k * 0xc4ceb9fe1a85ec53) & M64
    k ^= k >> 33
    return k


def murmur3_x64_128(data, seed=0):
    """MurmurHash3_x64_128: 16 bytes, h1 then h2, each little-endian (protocol.md, transcript digest)."""
    c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
    h1 = h2 = seed
    n = len(data)
    nblocks = n // 16
    for i in range(nblocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        k1 = (k1 * c1) & M64
        k1 = _rotl(k1, 31)
        k1 = (k1 * c2) & M64
        h1 ^= k1
        h1 = _rotl(h1, 27)
        h1 = (h1 + h2) & M64
        h1 = (h1 * 5 + 0x52dce729) & M64
        k2 = (k2 * c2) & M64
        k2 = _rotl(k2, 33)
        k2 = (k2 * c1) & M64
        h2 ^= k2
        h2 = _rotl(h2, 31)
        h2 = (h2 + h1) & M64
        h2 = (h2 * 5 + 0x38495ab5) & M64
    tail = data[16 * nblocks:]
    k1 = k2 = 0
    t = len(tail)
    if t > 8:
        k2 = int.from_bytes(tail[8:], "little")
        k2 = (k2 * c2) & M64
        k2 = _rotl(k2, 33)
        k2 = (k2 * c1) & M64
        h2 ^= k2
    if t > 0:
        k1 = int.from_bytes(tail[:8], "little")
        k1 = (k1 * c1) & M64
        k1 = _rotl(k1, 31)
        k1 = (k1 * c2) & M64
        h1 ^= k1
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    return h1.to_bytes(8, "little") + h2.to_bytes(8, "little")


def u64(v):
    return v.to_bytes(8, "big")


def u32(v):
    return v.to_bytes(4, "big")


class Transcript:
    """The snapshot transcript of one staging attempt (protocol.md, 'Snapshot transcript digest')."""

    def __init__(self):
        self.data = bytearray(b"orbitkv.transcript-digest\x00\x02")

    def begin(self, frame_number, view_msb, view_lsb, digest, s0):
        self.data += b"\x01" + u64(frame_number) + u64(view_msb) + u64(view_lsb) + digest + u64(s0)

    def page(self, frame_number, ordinal, records):
        self.data += b"\x02" + u64(frame_number) + u64(ordinal) + u32(len(records))
        self._records(records)

    def replay(self, frame_number, frm, to, records):
        self.data += b"\x03" + u64(frame_number) + u64(frm) + u64(to) + u32(len(records))
        self._records(records)

    def _records(self, records):
        for ns, key, medium, op, seq, size in records:
            self.data += bytes([len(ns)]) + ns + bytes([len(key)]) + key + bytes([medium, op]) + u64(seq) + u64(size)

    def digest(self):
        return murmur3_x64_128(bytes(self.data))


def self_test():
    """The golden vectors of docs/protocol.md, so a broken hash never reaches a session."""
    assert murmur3_x64_128(b"The quick brown fox jumps over the lazy dog").hex() == "6c1b07bc7bbc4be347939ac4a93c437a"
    assert Transcript().digest().hex() == "015650a1ae46c01815561d559e2bb962"
    assert scope_digest_all().hex() == "a5c1f155f36b9e01484362f4652a08c9e3fa6ebc43a62b5a69c832217c6f4bc9"
    ns_a = b"ns-a"
    list_digest = hashlib.sha256(b"orbitkv.scope-digest\x00\x01\x01" + u32(1) + u32(len(ns_a)) + ns_a).digest()
    view = uuid.UUID("01020304-0506-0708-090a-0b0c0d0e0f10")
    t = Transcript()
    t.begin(1, view.int >> 64, view.int & M64, list_digest, 5)
    t.page(2, 1, [(ns_a, b"k1", 1, 1, 3, 100)])
    t.replay(3, 5, 7, [(ns_a, b"k1", 1, 2, 6, 0), (ns_a, b"k2", 2, 1, 7, 4096)])
    assert t.digest().hex() == "895687516399057cc2844c26f55f0c5a", t.digest().hex()


# -------------------------------------------------------------------------------------------------- etcd

class Etcd:
    """etcd's v3 JSON gateway (keys and values base64, 64-bit integers as strings)."""

    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port

    def call(self, path, body, timeout=5.0):
        c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            r = c.getresponse()
            text = r.read()
            if r.status != 200:
                raise RuntimeError("etcd %s answered %d: %s" % (path, r.status, text[:300]))
            return json.loads(text)
        finally:
            c.close()

    @staticmethod
    def b64(s):
        return base64.b64encode(s if isinstance(s, bytes) else s.encode()).decode()

    @staticmethod
    def text(b64value):
        return base64.b64decode(b64value).decode("utf-8")


def prefix_end(prefix):
    b = bytearray(prefix.encode())
    b[-1] += 1
    return bytes(b)


def parse_endpoint(text):
    """host:port, an IPv6 literal in brackets."""
    if text.startswith("["):
        host, _, port = text[1:].partition("]:")
    else:
        host, _, port = text.rpartition(":")
    return host, int(port)


def decode_member(key_node, text):
    """operations.md section 2: six lines, plus 'role = requester' for a requester-only member."""
    lines = text.split("\n")
    if lines[-1] != "" or len(lines) not in (7, 8):
        return None
    names = ["node_id", "node_epoch", "incarnation", "peer", "control", "protocol"]
    values = {}
    for name, line in zip(names, lines):
        if not line.startswith(name + " = "):
            return None
        values[name] = line[len(name) + 3:]
    requester_only = len(lines) == 8
    if requester_only and lines[6] != "role = requester":
        return None
    if values["node_id"] != key_node:
        return None  # stored under another node's key
    return {"node_id": values["node_id"], "epoch": int(values["node_epoch"]), "id": uuid.UUID(values["incarnation"]),
            "peer": values["peer"], "serving": not requester_only}


def encode_member(node, epoch, inc, endpoint):
    return ("node_id = %s\nnode_epoch = %d\nincarnation = %s\npeer = %s\ncontrol = %s\nprotocol = %s\n"
            "role = requester\n" % (node, epoch, inc, endpoint, endpoint, PROTOCOL))


def parse_epoch(text):
    if text.isdigit():
        return int(text)  # the old binary's bare decimal
    first = text.split("\n")[0]
    assert first.startswith("node_epoch = "), text
    return int(first[len("node_epoch = "):])


class Membership:
    """Registration (one guarded transaction), lease renewal, and the watched view of members/."""

    def __init__(self, etcd, cluster, node, advertise):
        self.etcd, self.node, self.advertise = etcd, node, advertise
        self.prefix = "/orbitkv/v2/%s/" % cluster
        self.view = {}          # node_id -> member dict, admitted (leased) records only
        self.valid = False
        self.lock = threading.Lock()
        self.listeners = []
        self.fenced = threading.Event()
        self.lease = None

    def key(self, rest):
        return Etcd.b64(self.prefix + rest)

    def register(self):
        for _ in range(10):
            r = self.etcd.call("/v3/kv/txn", {"success": [
                {"request_range": {"key": self.key("format")}},
                {"request_range": {"key": self.key("epochs/" + self.node)}},
                {"request_range": {"key": self.key("epochs/@floor")}}]})
            kvs = [resp["response_range"].get("kvs", []) for resp in r["responses"]]
            if not kvs[0]:
                raise SystemExit("cluster is not formatted (orbitkv admin format first)")
            fmt = kvs[0][0]
            fmt_text = Etcd.text(fmt["value"])
            lines = fmt_text.split("\n")
            if len(lines) != 3 or lines[0] != "protocol = " + PROTOCOL or not lines[1].startswith("cluster_uuid = "):
                raise SystemExit("format record is not v4: %r" % fmt_text)
            self.cluster_uuid = uuid.UUID(lines[1][len("cluster_uuid = "):])
            epoch_rev = int(kvs[1][0]["mod_revision"]) if kvs[1] else 0
            floor_rev = int(kvs[2][0]["mod_revision"]) if kvs[2] else 0
            last = max(parse_epoch(Etcd.text(kvs[1][0]["value"])) if kvs[1] else 0,
                       parse_epoch(Etcd.text(kvs[2][0]["value"])) if kvs[2] else 0)
            epoch = last + 1
            inc = uuid.uuid4()
            grant = self.etcd.call("/v3/lease/grant", {"TTL": LEASE_TTL_S})
            lease = grant["ID"]
            sent = time.monotonic()
            epoch_record = "node_epoch = %d\nissued_unix_ms = %d\n" % (epoch, int(time.time() * 1000))
            compare = [
                {"key": self.key("format"), "target": "VALUE", "result": "EQUAL", "value": fmt["value"]},
                {"key": self.key("format"), "target": "MOD", "result": "EQUAL", "mod_revision": fmt["mod_revision"]},
                # an absent key compares as mod_revision == 0 (operations.md section 2, step 4)
                {"key": self.key("epochs/" + self.node), "target": "MOD", "result": "EQUAL", "mod_revision": str(epoch_rev)},
                {"key": self.key("epochs/@floor"), "target": "MOD", "result": "EQUAL", "mod_revision": str(floor_rev)},
            ]
            txn = self.etcd.call("/v3/kv/txn", {"compare": compare, "success": [
                {"request_put": {"key": self.key("epochs/" + self.node), "value": Etcd.b64(epoch_record)}},
                {"request_put": {"key": self.key("members/" + self.node),
                                 "value": Etcd.b64(encode_member(self.node, epoch, inc, self.advertise)), "lease": lease}}]})
            if txn.get("succeeded"):
                self.lease, self.epoch, self.inc = lease, epoch, inc
                self.confirmed = sent
                log("registered %s/%d/%s as requester-only, lease %s" % (self.node, epoch, inc, lease))
                return
            self.etcd.call("/v3/lease/revoke", {"ID": lease})
        raise SystemExit("registration did not commit after 10 tries")

    def start(self):
        threading.Thread(target=self._renew, daemon=True, name="renew").start()
        rev = self._read()
        threading.Thread(target=self._watch, args=(rev,), daemon=True, name="watch").start()

    def _renew(self):
        while not self.fenced.is_set():
            sent = time.monotonic()
            try:
                r = self.etcd.call("/v3/lease/keepalive", {"ID": self.lease}, timeout=RENEW_INTERVAL_S)
                if int(r.get("result", {}).get("TTL", "0")) > 0:
                    self.confirmed = sent
            except Exception as e:  # a failed renewal: the deadline below decides
                log("renewal failed:", e)
            if time.monotonic() > self.confirmed + LEASE_TTL_S - FENCE_MARGIN_S:
                log("lease deadline passed: fenced")
                self.fenced.set()
                self._set_view(self.view, False)
                return
            time.sleep(max(0.0, sent + RENEW_INTERVAL_S - time.monotonic()))

    def _read(self):
        r = self.etcd.call("/v3/kv/range", {"key": self.key("members/"),
                                           "range_end": Etcd.b64(prefix_end(self.prefix + "members/"))})
        view = {}
        for kv in r.get("kvs", []):
            m = self._admit(kv)
            if m:
                view[m["node_id"]] = m
        self._set_view(view, True)
        return int(r["header"]["revision"])

    def _admit(self, kv):
        if not kv.get("lease"):
            return None  # only leased records are members (MEM-4)
        node = Etcd.text(kv["key"])[len(self.prefix + "members/"):]
        try:
            return decode_member(node, Etcd.text(kv["value"]))
        except Exception:
            return None

    def _watch(self, rev):
        while not self.fenced.is_set():
            try:
                rev = self._watch_once(rev)
            except Exception as e:
                log("watch ended:", e)
            if self.fenced.is_set():
                return
            self._set_view(self.view, False)  # suspended until read again (MEM-9)
            time.sleep(0.2)
            rev = self._read()

    def _watch_once(self, rev):
        c = http.client.HTTPConnection(self.etcd.host, self.etcd.port, timeout=None)
        c.request("POST", "/v3/watch", json.dumps({"create_request": {
            "key": self.key("members/"), "range_end": Etcd.b64(prefix_end(self.prefix + "members/")),
            "start_revision": str(rev + 1)}}), {"Content-Type": "application/json"})
        r = c.getresponse()
        decoder = json.JSONDecoder()
        buf = ""
        while True:
            chunk = r.read1(65536) if hasattr(r, "read1") else r.read(1)
            if not chunk:
                return rev
            buf += chunk.decode()
            while True:
                buf = buf.lstrip()
                if not buf:
                    break
                try:
                    msg, end = decoder.raw_decode(buf)
                except ValueError:
                    break
                buf = buf[end:]
                res = msg.get("result", {})
                if res.get("compact_revision") or res.get("canceled"):
                    raise RuntimeError("watch compacted or cancelled")
                events = res.get("events", [])
                if not events:
                    continue
                view = dict(self.view)
                for ev in events:
                    kv = ev["kv"]
                    node = Etcd.text(kv["key"])[len(self.prefix + "members/"):]
                    if ev.get("type") == "DELETE":
                        view.pop(node, None)
                    else:
                        m = self._admit(kv)
                        if m:
                            view[node] = m
                        else:
                            view.pop(node, None)
                    rev = max(rev, int(kv["mod_revision"]))
                self._set_view(view, True)
                own = view.get(self.node)
                if own is None or own["id"] != self.inc:
                    log("own record replaced or gone: fenced")
                    self.fenced.set()
                    self._set_view(view, False)

    def _set_view(self, view, valid):
        with self.lock:
            self.view, self.valid = view, valid and not self.fenced.is_set()
            listeners = list(self.listeners)
        for f in listeners:
            f()

    def admitted(self, node, epoch, inc):
        with self.lock:
            m = self.view.get(node)
            return self.valid and m is not None and m["epoch"] == epoch and m["id"] == inc

    def close(self):
        self.fenced.set()
        if self.lease:
            try:
                self.etcd.call("/v3/lease/revoke", {"ID": self.lease})
            except Exception as e:
                log("revoke failed:", e)


# ------------------------------------------------------------------------------------------------ session

def to_uuid_msg(u):
    return pb.Uuid(msb=u.int >> 64, lsb=u.int & M64)


def from_uuid_msg(m):
    return uuid.UUID(int=(m.msb << 64) | m.lsb)


class Refusal(Exception):
    def __init__(self, cause, detail):
        super().__init__(detail)
        self.cause, self.detail = cause, detail


def records_of(frame_body):
    """(ns, key, medium, op, seq, size) tuples of a page or delta, with the G14 checks."""
    out = []
    table = list(frame_body.namespaces)
    if len(table) > len(frame_body.records):
        raise Refusal(pb.MALFORMED_FRAME, "namespace table larger than the record count")
    for r in frame_body.records:
        if r.namespace_index >= len(table):
            raise Refusal(pb.MALFORMED_FRAME, "namespace index out of the table")
        ns = table[r.namespace_index]
        if not 1 <= len(ns) <= 255 or not 1 <= len(r.key) <= 64:
            raise Refusal(pb.MALFORMED_FRAME, "namespace or key length out of bounds")
        if r.medium not in (1, 2) or r.op not in (1, 2):
            raise Refusal(pb.UNKNOWN_ENUM_VALUE, "medium or op")
        if r.sequence < 1 or r.sequence >> 63 or r.size_bytes >> 63:
            raise Refusal(pb.INTEGER_OVERFLOW if (r.sequence >> 63 or r.size_bytes >> 63) else pb.MALFORMED_FRAME,
                          "sequence or size")
        if r.op == 2 and r.size_bytes != 0:
            raise Refusal(pb.MALFORMED_FRAME, "a delete with a size")
        rec = (bytes(ns), bytes(r.key), r.medium, r.op, r.sequence, r.size_bytes)
        if out and (rec[0], rec[1], rec[2]) <= (out[-1][0], out[-1][1], out[-1][2]):
            raise Refusal(pb.MALFORMED_FRAME, "records not strictly increasing in (StateKey, medium)")
        out.append(rec)
    return out


class SourceView:
    """What this requester knows of one source incarnation: installed residences and watermark."""

    def __init__(self, member):
        self.member = member
        self.view_id = None
        self.watermark = 0
        self.head = 0
        self.residences = {}   # (ns, key, medium) -> (seq, size)


class Session:
    def __init__(self, requester, member):
        self.req, self.member = requester, member
        self.view = SourceView(member)
        self.stopped = threading.Event()
        self.call = None
        self.thread = threading.Thread(target=self._run, daemon=True, name="session-" + member["node_id"])

    def start(self):
        self.thread.start()

    def stop(self):
        self.stopped.set()
        c = self.call
        if c is not None:
            c.cancel()

    def _run(self):
        import grpc
        backoff = BACKOFF_MIN_S
        host, port = parse_endpoint(self.member["peer"])
        channel = grpc.insecure_channel("%s:%d" % (host, port), options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE), ("grpc.max_send_message_length", MAX_MESSAGE)])
        while not self.stopped.is_set() and not self.req.membership.fenced.is_set():
            progressed = False
            try:
                progressed = self._stream(channel)
            except Exception as e:
                log("session to %s ended: %s" % (self.member["node_id"], e))
            if self.stopped.is_set():
                break
            backoff = BACKOFF_MIN_S if progressed else min(BACKOFF_MAX_S, backoff * 2)
            time.sleep(backoff * (0.5 + random.random() / 2))
        channel.close()

    def _stream(self, channel):
        m, me = self.member, self.req.membership
        session_id = uuid.uuid4()
        sid = to_uuid_msg(session_id)
        out = queue.Queue(maxsize=4096)
        done = object()

        def requests():
            while True:
                item = out.get()
                if item is done:
                    return
                yield item

        out.put(pb.RequesterFrame(session_id=sid, open=pb.Open(
            protocol=PROTOCOL, cluster_uuid=to_uuid_msg(me.cluster_uuid),
            source=pb.IncarnationRef(node_id=m["node_id"], node_epoch=m["epoch"], id=to_uuid_msg(m["id"])),
            requester=pb.IncarnationRef(node_id=me.node, node_epoch=me.epoch, id=to_uuid_msg(me.inc)),
            scope=pb.ScopeSpec(all=pb.AllNamespaces()), scope_digest=self.req.scope_digest,
            session_id=sid, receive_window_bytes=RECEIVE_WINDOW)))
        call_fn = channel.stream_stream(METHOD, request_serializer=pb.RequesterFrame.SerializeToString,
                                        response_deserializer=pb.SourceFrame.FromString)
        self.call = call = call_fn(requests())
        last_bytes = [time.monotonic()]
        watchdog_stop = threading.Event()

        def watchdog():  # the receive deadline: three liveness intervals without any source bytes
            while not watchdog_stop.wait(0.2):
                if time.monotonic() - last_bytes[0] > 3 * LIVENESS_INTERVAL_S:
                    log("receive silence from %s: reconnecting" % m["node_id"])
                    call.cancel()
                    return

        threading.Thread(target=watchdog, daemon=True).start()
        state = {"frame": 0, "staging": None, "asked": set()}
        progressed = False
        try:
            for frame in call:
                last_bytes[0] = time.monotonic()
                if frame.session_id != sid:
                    continue  # SES-6: dropped, no frame number consumed
                try:
                    if not me.admitted(m["node_id"], m["epoch"], m["id"]):
                        raise Refusal(pb.UNKNOWN_SOURCE_INCARNATION if me.valid else pb.MEMBERSHIP_SUSPENDED,
                                      "source not admitted by this requester's view")
                    if frame.frame_number >> 63:
                        raise Refusal(pb.INTEGER_OVERFLOW, "frame number")
                    if frame.frame_number != state["frame"] + 1:
                        raise Refusal(pb.FRAME_OUT_OF_ORDER, "expected frame %d, got %d"
                                      % (state["frame"] + 1, frame.frame_number))
                    state["frame"] = frame.frame_number
                    ack = self._handle(frame, state, sid, out)
                    progressed |= ack
                    if ack:
                        staging = state["staging"]
                        view_id = staging["view_id"] if staging else self.view.view_id
                        a = pb.Ack(consumed_through_frame=frame.frame_number, applied_cursor=self.view.watermark)
                        if view_id:
                            a.view_id.CopyFrom(to_uuid_msg(view_id))
                        out.put(pb.RequesterFrame(session_id=sid, ack=a))
                except Refusal as r:
                    log("closing session to %s: %s %s" % (m["node_id"], pb.ErrorCause.Name(r.cause), r.detail))
                    out.put(pb.RequesterFrame(session_id=sid, error=pb.Error(cause=r.cause, detail=r.detail[:1000])))
                    break
                except SourceClosed as c:
                    log("source %s closed the session: %s" % (m["node_id"], c))
                    break
        finally:
            watchdog_stop.set()
            out.put(done)
            call.cancel()
            self.call = None
        return progressed

    def _handle(self, frame, state, sid, out):
        """Returns True when the frame consumed credit (an ACK follows)."""
        kind = frame.WhichOneof("body")
        v = self.view
        staging = state["staging"]
        if kind == "accepted":
            a = frame.accepted
            if a.mode not in (1, 2):
                raise Refusal(pb.UNKNOWN_ENUM_VALUE, "open mode")
            v.head = a.source_head
            return False
        if kind == "liveness":
            v.head = frame.liveness.source_head
            return False
        if kind == "error":
            raise SourceClosed("%s %s" % (pb.ErrorCause.Name(frame.error.cause), frame.error.detail))
        if kind == "snapshot_begin":
            b = frame.snapshot_begin
            if len(b.scope_digest) != 32:
                raise Refusal(pb.MALFORMED_FRAME, "scope digest length")
            if b.scope_digest != self.req.scope_digest:
                raise Refusal(pb.SCOPE_DIGEST_MISMATCH, "snapshot for another scope")
            t = Transcript()
            t.begin(frame.frame_number, b.view_id.msb, b.view_id.lsb, b.scope_digest, b.s0)
            state["staging"] = {"view_id": from_uuid_msg(b.view_id), "s0": b.s0, "cursor": b.s0, "pages": 0,
                                "first": frame.frame_number, "last": frame.frame_number, "max_scanned": 0,
                                "replayed": False, "last_key": None, "map": {}, "transcript": t}
            return True
        if kind == "snapshot_page":
            p = frame.snapshot_page
            if staging is None or from_uuid_msg(p.view_id) != staging["view_id"]:
                raise Refusal(pb.RESUME_VIEW_UNKNOWN, "page of no staging view")
            if staging["replayed"] or p.page_ordinal != staging["pages"] + 1:
                raise Refusal(pb.FRAME_OUT_OF_ORDER, "page ordinal %d" % p.page_ordinal)
            recs = records_of(p)
            for ns, key, medium, op, seq, size in recs:
                if op != 1:
                    raise Refusal(pb.MALFORMED_FRAME, "a delete in a page")
                if staging["last_key"] is not None and (ns, key, medium) <= staging["last_key"]:
                    raise Refusal(pb.MALFORMED_FRAME, "pages not strictly increasing")
                staging["last_key"] = (ns, key, medium)
                staging["map"][(ns, key, medium)] = (seq, size)
                staging["max_scanned"] = max(staging["max_scanned"], seq)
            staging["pages"] += 1
            staging["last"] = frame.frame_number
            staging["transcript"].page(frame.frame_number, p.page_ordinal, recs)
            return True
        if kind == "delta":
            d = frame.delta
            if d.to >> 63 or getattr(d, "from") >> 63:
                raise Refusal(pb.INTEGER_OVERFLOW, "delta interval")
            frm, to = getattr(d, "from"), d.to
            if frm >= to:
                raise Refusal(pb.MALFORMED_FRAME, "empty or reversed delta (%d, %d]" % (frm, to))
            recs = records_of(d)
            for r in recs:
                if not frm < r[4] <= to:
                    raise Refusal(pb.MALFORMED_FRAME, "record sequence outside the delta's interval")
            if staging is not None:  # replay of (S0, S1]
                if frm != staging["cursor"]:
                    raise Refusal(pb.COMMIT_INCOMPLETE, "replay not contiguous: cursor %d, delta (%d, %d]"
                                  % (staging["cursor"], frm, to))
                self._apply(staging["map"], recs)
                staging["cursor"] = to
                staging["replayed"] = True
                staging["last"] = frame.frame_number
                staging["transcript"].replay(frame.frame_number, frm, to, recs)
                return True
            if v.view_id is None:
                raise Refusal(pb.RESUME_VIEW_UNKNOWN, "delta before any installed view")
            if frm == v.watermark:
                self._apply(v.residences, recs)
                v.watermark = to
                v.head = max(v.head, to)
            elif to <= v.watermark:
                pass  # a duplicate (DELTA-7): consumed
            elif v.watermark not in state["asked"]:  # once per distinct applied cursor
                state["asked"].add(v.watermark)
                f = pb.RequesterFrame(session_id=frame.session_id)
                regen = f.resume_from if frm < v.watermark else f.need_repair  # overlap (DELTA-8) or gap (DELTA-9)
                regen.view_id.CopyFrom(to_uuid_msg(v.view_id))
                regen.applied_cursor = v.watermark
                out.put(f)
            return True
        if kind == "snapshot_commit":
            c = frame.snapshot_commit
            if staging is None or from_uuid_msg(c.view_id) != staging["view_id"]:
                raise Refusal(pb.RESUME_VIEW_UNKNOWN, "commit of no staging view")
            if len(c.transcript_digest) != 16:
                raise Refusal(pb.MALFORMED_FRAME, "transcript digest length")
            if c.first_frame < 1 or c.last_frame < c.first_frame or c.max_scanned_sequence > c.s1:
                raise Refusal(pb.MALFORMED_FRAME, "commit fields")
            if (c.s1 != staging["cursor"] or c.page_count != staging["pages"] or c.first_frame != staging["first"]
                    or c.last_frame != staging["last"] or c.max_scanned_sequence != staging["max_scanned"]):
                raise Refusal(pb.COMMIT_INCOMPLETE, "commit (s1 %d, pages %d, frames %d..%d, max %d) vs staged "
                              "(cursor %d, pages %d, frames %d..%d, max %d)" % (
                                  c.s1, c.page_count, c.first_frame, c.last_frame, c.max_scanned_sequence,
                                  staging["cursor"], staging["pages"], staging["first"], staging["last"],
                                  staging["max_scanned"]))
            if c.transcript_digest != staging["transcript"].digest():
                raise Refusal(pb.TRANSCRIPT_DIGEST_MISMATCH, "transcript digest")
            with self.req.lock:
                v.view_id, v.watermark, v.residences = staging["view_id"], c.s1, staging["map"]
                v.head = max(v.head, c.s1)
            state["staging"] = None
            state["asked"] = set()
            log("installed view %s of %s at %d (%d residences)" % (v.view_id, self.member["node_id"], c.s1,
                                                                    len(v.residences)))
            return True
        raise Refusal(pb.MALFORMED_FRAME, "no frame body")

    def _apply(self, table, recs):
        """By version: a record older than what the view holds for its residence changes nothing."""
        with self.req.lock:
            for ns, key, medium, op, seq, size in recs:
                k = (ns, key, medium)
                held = table.get(k)
                if held is not None and held[0] >= seq:
                    continue
                if op == 1:
                    table[k] = (seq, size)
                else:
                    table.pop(k, None)


class SourceClosed(Exception):
    pass


class Requester:
    def __init__(self, membership):
        self.membership = membership
        self.scope_digest = scope_digest_all()
        self.sessions = {}  # (node, epoch, id) -> Session
        self.lock = threading.Lock()
        membership.listeners.append(self.on_view)

    def on_view(self):
        me = self.membership
        with me.lock:
            view, valid = dict(me.view), me.valid
        if not valid:
            return  # suspended: sessions stay, frames are refused by the admission check
        serving = {(m["node_id"], m["epoch"], m["id"]): m for m in view.values()
                   if m["serving"] and m["node_id"] != me.node}
        with self.lock:
            for k in list(self.sessions):
                if k not in serving:
                    self.sessions.pop(k).stop()
            for k, m in sorted(serving.items(), key=lambda e: e[0][0]):
                if k not in self.sessions:
                    s = Session(self, m)
                    self.sessions[k] = s
                    s.start()

    def dump(self):
        out = {}
        with self.lock:
            sessions = list(self.sessions.values())
        for s in sessions:
            v = s.view
            with self.lock:
                rows = sorted(v.residences.items())
                out[s.member["node_id"]] = {
                    "node_epoch": s.member["epoch"], "incarnation": str(s.member["id"]),
                    "view_id": str(v.view_id) if v.view_id else None, "watermark": v.watermark, "head": v.head,
                    "residences": [[ns.decode("utf-8", "backslashreplace"), key.hex(), MEDIUM_NAMES[med], seq, size]
                                   for (ns, key, med), (seq, size) in rows]}
        return out


def main():
    global pb
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--etcd", required=True, help="etcd client URL, http://127.0.0.1:PORT")
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--node-id", required=True)
    ap.add_argument("--advertise", default="127.0.0.1:9", help="the address in the member record (nobody dials it)")
    ap.add_argument("--pb-dir", required=True, help="directory holding inventory_session_pb2.py")
    args = ap.parse_args()
    sys.path.insert(0, args.pb_dir)
    import inventory_session_pb2
    pb = inventory_session_pb2
    self_test()
    membership = Membership(Etcd(args.etcd), args.cluster, args.node_id, args.advertise)
    membership.register()
    requester = Requester(membership)
    membership.start()
    print("READY %s/%d/%s" % (args.node_id, membership.epoch, membership.inc), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "dump":
            print("INDEX " + json.dumps(requester.dump(), sort_keys=True), flush=True)
        elif cmd == "quit":
            break
        elif cmd:
            print("ERROR unknown command %r" % cmd, flush=True)
    membership.close()
    with requester.lock:
        for s in requester.sessions.values():
            s.stop()
    print("BYE", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
