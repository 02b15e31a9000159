/**
 * Refuses a handler's response status that cannot be a final response: an adapter sends one whole response per
 * request, so a 1xx (interim, RFC 9110 §15.2) would leave the client waiting for the final one, and a status
 * outside 100..599 is not defined (§15). Both adapters call this before sending, so both turn such a response
 * into the same 500 (the Fetch `Response` constructor refuses the same range on its own).
 * @throws RangeError when `status` is not an integer in 200..599.
 */
export function checkFinalStatus(status: number): void {
  if (!isFinalStatus(status)) {
    throw new RangeError(
      `rest-webhooks: a handler's response status must be an integer in 200..599 (RFC 9110 §15), got ${status}`,
    );
  }
}

/** Whether `status` is one an adapter sends as a final response: an integer in 200..599 ({@link checkFinalStatus}). */
export function isFinalStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 599;
}
