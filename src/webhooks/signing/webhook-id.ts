import { isFieldContent } from "../../http/field-value";

/**
 * Whether `id` can be signed and sent as a Standard Webhooks `webhook-id`: a header value HTTP carries unchanged
 * (the signature covers it as given), without the "." that separates the parts of the signed content
 * `<id>.<timestamp>.<body>`.
 */
export function isWebhookId(id: unknown): id is string {
  return typeof id === "string" && isFieldContent(id) && !id.includes(".");
}
