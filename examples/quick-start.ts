import { conditional, etagFromVersion } from "rest-webhooks/caching";
import { HttpProblem, json } from "rest-webhooks/http";
import { idempotency, MemoryIdempotencyStore } from "rest-webhooks/idempotency";
import { createServer } from "rest-webhooks/node";
import { createRouter, routeOf } from "rest-webhooks/routing";
import { z } from "zod";

const NoteBody = z.object({ text: z.string().min(1) }).strict();
const notes = new Map<string, { id: string; text: string; version: number }>();
const find = (id: string) => {
  const note = notes.get(id);
  if (!note) throw new HttpProblem({ status: 404, code: "note_not_found", detail: `No note ${id}.` });
  return note;
};
const tag = (version: number) => etagFromVersion(version, { weak: false });

const router = createRouter().resource("/notes/{note_id}", (resource) => {
  // 304 for a matching If-None-Match; 412 for a stale If-Match, before the handler runs.
  resource.use(
    conditional({
      validators: (request) => {
        const current = notes.get(routeOf(request)?.params.note_id ?? "");
        return current && { etag: tag(current.version) };
      },
    }),
  );
  resource.list({}, () => json(200, [...notes.values()]));
  resource.create({ body: NoteBody }, ({ body, created }) => {
    const note = { id: crypto.randomUUID(), text: body.text, version: 1 };
    notes.set(note.id, note);
    return created(note.id, note); // 201 + Location: /notes/<id>
  });
  resource.read({}, ({ params }) => {
    const note = find(params.note_id);
    return json(200, note, { etag: tag(note.version), "cache-control": "no-cache" });
  });
  resource.replace({ body: NoteBody }, ({ params, body }) => {
    const current = find(params.note_id);
    // PUT twice = PUT once: the version (and so the ETag) moves only when the state does.
    const next = body.text === current.text ? current : { ...current, text: body.text, version: current.version + 1 };
    notes.set(next.id, next);
    return json(200, next, { etag: tag(next.version) });
  });
});

export const app = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "demo" })(router.handler());

if (process.argv[1]?.endsWith("quick-start.ts")) {
  createServer(app).listen(3000, "127.0.0.1", () => console.log("notes on http://127.0.0.1:3000/notes"));
}
