// The ids the built-in queues give attempt log lines: "att_" and the line's sequence number (PostgreSQL's bigserial
// `seq`, the memory queue's counter), so a position in the log is a comparison, whether or not its line is still kept.

const PREFIX = "att_";
// A bigserial starts at 1 and ends at 2^63 - 1; no leading zeros, so each line has one spelling.
const SEQ = /^[1-9][0-9]{0,18}$/;
const MAX_SEQ = "9223372036854775807";

/** The id of the line numbered `seq`. */
export function attemptId(seq: number | string): string {
  return `${PREFIX}${seq}`;
}

/** The sequence number (decimal) of an id the built-in queues could have given, else `undefined`. */
export function attemptSeq(id: string): string | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  const seq = id.slice(PREFIX.length);
  if (!SEQ.test(seq) || (seq.length === MAX_SEQ.length && seq > MAX_SEQ)) return undefined;
  return seq;
}
