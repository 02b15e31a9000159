import { METHOD_NAMES } from "../http/methods";

/**
 * Numbers the methods of a route table, so a matcher state keeps its routes in an array indexed by
 * method instead of a map: the RFC 9110 §9.3 methods have fixed slots, extension methods follow.
 */
export interface MethodSlots {
  /** Method names by slot. */
  readonly names: readonly string[];
  /** The slot of a request method, or -1 when no route declares it (methods are case-sensitive, §9.1). */
  slotOf(method: string): number;
}

/** The slots for a table declaring `methods`. */
export function methodSlots(methods: Iterable<string>): MethodSlots {
  // The table's methods in its order: slotOf's switch below hard-codes these positions (a test checks).
  const names: string[] = [...METHOD_NAMES];
  const extensions = new Map<string, number>();
  for (const method of methods) {
    if (!names.includes(method)) {
      extensions.set(method, names.length);
      names.push(method);
    }
  }
  return {
    names,
    slotOf(method) {
      // Most frequent first; equal internalized strings compare by reference.
      switch (method) {
        case "GET":
          return 0;
        case "POST":
          return 2;
        case "PUT":
          return 3;
        case "DELETE":
          return 4;
        case "PATCH":
          return 8;
        case "HEAD":
          return 1;
        case "OPTIONS":
          return 6;
        case "CONNECT":
          return 5;
        case "TRACE":
          return 7;
      }
      return extensions.get(method) ?? -1;
    },
  };
}
