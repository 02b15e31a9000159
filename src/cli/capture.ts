/**
 * A captured HTTP request as `verify` reads it: an optional request line, header lines, a blank line, then the
 * raw body bytes, exactly as received (RFC 9112 §2.1: `start-line *( field-line CRLF ) CRLF [ message-body ]`;
 * bare LF line ends are accepted too, RFC 9112 §2.2).
 */

/** A parsed capture. */
export interface Capture {
  method: string | undefined;
  target: string | undefined;
  /** Header fields, names lower-cased; repeated fields joined with ", " (RFC 9110 §5.3). */
  headers: Record<string, string>;
  /** The body bytes after the blank line, untouched. */
  body: Uint8Array;
  /** Notes about what was adjusted (a trailing newline an editor added, say). */
  notes: string[];
}

// RFC 9110 §5.1: field-name = token; token = 1*tchar.
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

// RFC 9112 §3: request-line = method SP request-target SP HTTP-version (the version is optional here).
const REQUEST_LINE = /^([A-Z][A-Z0-9!#$%&'*+.^_`|~-]*) (\S+)(?: HTTP\/\d(?:\.\d)?)?$/;

function separator(bytes: Uint8Array): { headEnd: number; bodyStart: number } | undefined {
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    if (bytes[i + 1] === 0x0a) return { headEnd: i, bodyStart: i + 2 };
    if (bytes[i + 1] === 0x0d && bytes[i + 2] === 0x0a) return { headEnd: i, bodyStart: i + 3 };
  }
  return undefined;
}

/**
 * Parses a capture; returns an error message when there is no blank line or a line is not a header field (a field
 * name that is not a token, whitespace before the colon, a folded line).
 * @param bytes The whole capture, e.g. read from stdin.
 * @example parseCapture(Buffer.from("content-type: application/json\n\n{}"))
 */
export function parseCapture(bytes: Uint8Array): Capture | string {
  const split = separator(bytes);
  if (split === undefined) return "no blank line between the header lines and the body";
  const head = new TextDecoder().decode(bytes.subarray(0, split.headEnd)).split(/\r?\n/);
  const capture: Capture = {
    method: undefined,
    target: undefined,
    headers: {},
    body: bytes.subarray(split.bodyStart),
    notes: [],
  };
  const requestLine = REQUEST_LINE.exec(head[0] ?? "");
  if (requestLine) {
    capture.method = requestLine[1];
    capture.target = requestLine[2];
    head.shift();
  }
  for (const line of head) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    if (colon <= 0) return `not a header line: ${JSON.stringify(line.slice(0, 80))}`;
    const raw = line.slice(0, colon);
    // RFC 9112 §5.1: a server MUST reject whitespace between the field name and the colon; §5.2: obsolete
    // line folding (a line starting with whitespace) may be rejected too, and a verifier should not guess.
    if (!FIELD_NAME.test(raw)) {
      const why = /^[ \t]/.test(raw)
        ? "a line starting with whitespace (obsolete line folding, RFC 9112 §5.2)"
        : /[ \t]$/.test(raw)
          ? "whitespace between the field name and the colon (RFC 9112 §5.1)"
          : "a field name that is not a token (RFC 9110 §5.1)";
      return `${why}: ${JSON.stringify(line.slice(0, 80))}`;
    }
    const name = raw.toLowerCase();
    const value = line.slice(colon + 1).trim();
    capture.headers[name] = capture.headers[name] === undefined ? value : `${capture.headers[name]}, ${value}`;
  }
  trimEditorNewline(capture);
  return capture;
}

// A capture saved by an editor often gains a final newline: drop it only when Content-Length proves it extra.
function trimEditorNewline(capture: Capture): void {
  const declared = capture.headers["content-length"];
  if (declared === undefined || !/^\d+$/.test(declared)) return;
  const length = Number(declared);
  const body = capture.body;
  const extra = body.length - length;
  const tail = body.subarray(length);
  const isNewline = (extra === 1 && tail[0] === 0x0a) || (extra === 2 && tail[0] === 0x0d && tail[1] === 0x0a);
  if (!isNewline) return;
  capture.body = body.subarray(0, length);
  capture.notes.push(`dropped a final newline after the ${length} bytes Content-Length declares`);
}
