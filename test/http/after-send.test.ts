import { describe, expect, it } from "vitest";
import { carryAfterSend, takeAfterSend, withAfterSend } from "../../src/http/after-send";
import { empty, type HttpResponse } from "../../src/http/message";

const run = (response: HttpResponse) => takeAfterSend(response)?.();

describe("after-send callbacks", () => {
  it("survive a wrapper's spread copy, and run once", () => {
    const ran: string[] = [];
    const copy = { ...withAfterSend(empty(200), () => ran.push("a")), headers: { etag: '"a"' } };
    run(copy);
    run(copy);
    expect(ran).toEqual(["a"]);
  });

  describe("carryAfterSend: the callback of the response the client is answered with", () => {
    it("moves the replaced response's callback onto the one sent instead, leaving the replaced one as it was", () => {
      const ran: string[] = [];
      const handlers = withAfterSend(empty(200), () => ran.push("handler"));
      const sent = carryAfterSend(handlers, empty(304));
      expect(sent.status).toBe(304);
      run(sent);
      expect(ran).toEqual(["handler"]);
      // `from` is not sent and not mutated: its own callback is still there for whoever owns it.
      expect(takeAfterSend(handlers)).toBeTypeOf("function");
    });

    it("runs a callback the new response already carries first", () => {
      const ran: string[] = [];
      const from = withAfterSend(empty(200), () => ran.push("from"));
      run(
        carryAfterSend(
          from,
          withAfterSend(empty(304), () => ran.push("to")),
        ),
      );
      expect(ran).toEqual(["to", "from"]);
    });

    it("attaches nothing when the replaced response carries nothing", () => {
      const to = empty(304);
      expect(carryAfterSend(empty(200), to)).toBe(to);
      expect(takeAfterSend(to)).toBeUndefined();
    });

    it("does not attach a response's callback to itself twice", () => {
      const ran: string[] = [];
      const response = withAfterSend(empty(200), () => ran.push("a"));
      run(carryAfterSend(response, response));
      expect(ran).toEqual(["a"]);
    });
  });
});
