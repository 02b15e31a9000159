// Ids and tenants are 1 to 255 printable ASCII characters: anything else names nothing, is never handed to a store
// (PostgreSQL refuses NUL), and never reaches a log as it was sent.
const PRINTABLE_ID = /^[\x21-\x7e]{1,255}$/;

/** Whether `value` is 1 to 255 printable ASCII characters: what an id or a tenant may be. */
export const isPrintableId = (value: unknown): value is string => typeof value === "string" && PRINTABLE_ID.test(value);
