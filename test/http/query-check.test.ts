import { describe, expect, it } from "vitest";
import { queryProblem } from "../../src/http/query-check";

describe("queryProblem: query parameters a store can keep", () => {
  it.each([
    ["starting_after=%00", "starting_after"],
    ["delivery_id=x%00", "delivery_id"],
    ["a=1&since=%C0%80", "since"],
    ["cursor=%FF", "cursor"],
    ["cursor=%ED%A0%80", "cursor"],
    ["q=%zz", "q"],
    ["q=%", "q"],
    ["%00=1", "\u0000"],
    ["flag%00", "flag\u0000"],
  ])("%s → 400 malformed_query naming %j", (search, parameter) => {
    const problem = queryProblem(search);
    expect(problem).toMatchObject({ status: 400, code: "malformed_query" });
    expect(problem?.extensions).toStrictEqual({ parameter });
  });

  it.each(["", "a=1&b=2", "x=1%202&x=3&y=%C3%A9&z", "plus=a+b", "ids[]=7", "e=%F0%9F%98%80"])(
    "%j is fine",
    (search) => {
      expect(queryProblem(search)).toBeUndefined();
    },
  );
});
