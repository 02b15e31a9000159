import { finiteNumber, nonNegativeInteger, nonNegativeNumber, notNaN } from "../../options/number-option";
import type { InboxEvent } from "./event";
import type { InboxClaimRequest, InboxFailOutcome } from "./inbox";

/*
 * The checks every Inbox makes of the times and counts it schedules by, so that the memory and PostgreSQL inboxes
 * refuse the same values with the same TypeError. NaN compares false with everything: a NaN claim time would take
 * every event whatever its due time, and a NaN lease end or retry time would leave an event in the memory inbox's
 * heap where no claim finds it again, where PostgreSQL refuses it with an error of its own.
 */

/**
 * `Inbox.add`'s event: its `receivedAt` is when it is first due, so a NaN one would be claimed by no claim (memory) or
 * refused by PostgreSQL with an error of its own.
 */
export function checkInboxAdd(event: InboxEvent): void {
  finiteNumber("Inbox.add", "receivedAt", event.receivedAt, "epoch milliseconds");
}

/** `Inbox.claim`'s request: an instant, a lease of 0 or more, a count of 0 or more. */
export function checkInboxClaim(request: InboxClaimRequest): void {
  finiteNumber("Inbox.claim", "now", request.now, "epoch milliseconds");
  nonNegativeNumber("Inbox.claim", "leaseMs", request.leaseMs, "milliseconds");
  nonNegativeInteger("Inbox.claim", "limit", request.limit);
}

/** `Inbox.fail`'s clock reading, and the retry time when the outcome is a retry. */
export function checkInboxFail(outcome: InboxFailOutcome, now: number): void {
  finiteNumber("Inbox.fail", "now", now, "epoch milliseconds");
  if (!("dead" in outcome)) finiteNumber("Inbox.fail", "retryAt", outcome.retryAt, "epoch milliseconds");
}

/** The clock reading of `Inbox.complete` (it orders done events for purging) or `Inbox.retryDeadLetter`. */
export function checkInboxNow(method: "complete" | "retryDeadLetter", now: number): void {
  finiteNumber(`Inbox.${method}`, "now", now, "epoch milliseconds");
}

/**
 * `Inbox.purgeDone`'s time: any number but NaN, so that `Infinity` purges every done event (and `-Infinity` none) in
 * every inbox alike. PostgreSQL refused NaN and text with errors of its own, where the memory inbox purged nothing.
 */
export function checkInboxPurge(before: unknown): void {
  notNaN("Inbox.purgeDone", "before", before, "epoch milliseconds");
}
