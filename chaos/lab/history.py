"""history.py — what a chaos run did, as its checkers and its report read it.

A history is a list of operation records and a list of fault events.

An operation record (one JSON object per line in history.jsonl):

    {"process": 3, "f": "write", "key": "k7", "value": 12,
     "start": 1.234, "end": 1.240, "type": "ok", "error": "..."}

A cancelled transaction's record also has "reasons": the codes of its
CancellationReasons, in action order.

start and end are seconds since the run began (monotonic clock): the
request left at start, its answer arrived at end. type is "ok" (it took
effect, and value holds what it returned where it returns something),
"fail" (it certainly did not take effect: DynamoDB answered a client
error, such as a failed condition, a throttle or a cancelled
transaction) or "info" (the outcome is unknown: a timeout, a dropped
connection, a 5xx; it may take effect later, or never). Checkers must
treat info as "maybe", never as "no".

A fault event (faults.jsonl): {"time": 3.2, "fault": "kill",
"target": "node1", "end": 5.0 or null}; end is when the fault was
undone (restart, resume, heal), null if the run's end undid it.
"""

import json
import threading
import time

from botocore.exceptions import (ClientError, ConnectionError as BotoConnError,
                                 HTTPClientError, ReadTimeoutError)

# Error codes DynamoDB answers before applying anything: the request did
# not take effect. Everything else that is not a success is unknown.
DEFINITE = {
    "ConditionalCheckFailedException", "ProvisionedThroughputExceededException",
    "ThrottlingException", "RequestLimitExceeded", "ValidationException",
    "TransactionCanceledException", "TransactionConflictException",
    "TransactionInProgressException", "ResourceNotFoundException",
    "ItemCollectionSizeLimitExceededException", "SerializationException",
    "IdempotentParameterMismatchException",
}


def outcome_of(exc):
    """("fail" or "info", error name) for an exception a call raised."""
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        return ("fail" if code in DEFINITE else "info"), code
    if isinstance(exc, (ReadTimeoutError, BotoConnError, HTTPClientError)):
        return "info", type(exc).__name__
    return "info", "%s: %s" % (type(exc).__name__, exc)


class History:
    def __init__(self):
        self.t0 = time.monotonic()
        self.ops = []
        self.faults = []
        self.lock = threading.Lock()

    def now(self):
        return round(time.monotonic() - self.t0, 6)

    def record(self, rec):
        with self.lock:
            self.ops.append(rec)

    def call(self, process, f, key, value, fn):
        """Runs fn() as operation f on key; records it and returns
        (type, result): result is fn's return value for ok, None
        otherwise. value is what the record carries (for a read, fn's
        result is turned into it by the caller, who may update
        rec["value"] through the returned record)."""
        rec = {"process": process, "f": f, "key": key, "value": value,
               "start": self.now()}
        try:
            result = fn()
            rec["type"] = "ok"
        except Exception as e:  # noqa: BLE001 - every outcome is recorded
            rec["type"], rec["error"] = outcome_of(e)
            result = None
            reasons = (e.response.get("CancellationReasons")
                       if isinstance(e, ClientError) else None)
            if reasons:
                rec["reasons"] = [r.get("Code") for r in reasons]
            if not isinstance(e, (ClientError, ReadTimeoutError,
                                  BotoConnError, HTTPClientError)):
                raise
        rec["end"] = self.now()
        self.record(rec)
        if rec.get("error") == "EndpointConnectionError":
            # Nothing listens (the router is down): a client waits a
            # little before it tries again, rather than spin.
            time.sleep(0.05)
        return rec, result

    def fault(self, kind, target, **extra):
        """Notes a fault that starts now; returns its event, whose end
        the caller sets with undo()."""
        ev = dict({"time": self.now(), "fault": kind, "target": target,
                   "end": None}, **extra)
        with self.lock:
            self.faults.append(ev)
        return ev

    def undo(self, ev):
        if ev is not None and ev["end"] is None:
            ev["end"] = self.now()

    def save(self, folder):
        with open(folder + "/history.jsonl", "w") as f:
            for r in sorted(self.ops, key=lambda r: r["start"]):
                f.write(json.dumps(r, sort_keys=True) + "\n")
        with open(folder + "/faults.jsonl", "w") as f:
            for ev in self.faults:
                f.write(json.dumps(ev, sort_keys=True) + "\n")

    def counts(self):
        out = {"operations": len(self.ops), "ok": 0, "fail": 0, "info": 0}
        for r in self.ops:
            out[r["type"]] += 1
        return out
