/**
 * docs/observability.md against `rest-webhooks/otel`: its tables name exactly the metrics the module records, the
 * spans it makes, and every attribute it sets, as the exported constants spell them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ATTRIBUTES, METRIC_NAMES, SPAN_NAMES } from "../../src/otel/index";

const page = readFileSync(new URL("../../docs/observability.md", import.meta.url), "utf8");

/** The first cells of the table right under a `## ` heading, backticks removed. */
function firstColumn(heading: string): string[] {
  const lines = page.slice(page.indexOf(`\n## ${heading}\n`)).split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  const rows: string[] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith("|")) break;
    rows.push((line.split("|")[1] as string).trim().replaceAll("`", ""));
  }
  return rows;
}

describe("docs/observability.md", () => {
  it("lists exactly the metrics of METRIC_NAMES", () => {
    expect(firstColumn("Metrics").sort()).toEqual(Object.values(METRIC_NAMES).sort());
  });

  it("names each span as SPAN_NAMES does (the event type after publish and process)", () => {
    expect(firstColumn("Spans").map((name) => name.replace(" <event type>", ""))).toEqual([
      SPAN_NAMES.publish,
      SPAN_NAMES.attempt,
      SPAN_NAMES.receive,
      SPAN_NAMES.process,
    ]);
  });

  it("names every attribute of ATTRIBUTES", () => {
    expect(Object.values(ATTRIBUTES).filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});
