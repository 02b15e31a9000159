import { conditional, etagFromVersion } from "rest-webhooks/caching";
import { HttpProblem, json } from "rest-webhooks/http";
import { idempotency, MemoryIdempotencyStore } from "rest-webhooks/idempotency";
import { createServer } from "rest-webhooks/node";
import { createRouter } from "rest-webhooks/routing";
import { z } from "zod";

const NoteBody = z.object({ text: z.string().min(1) }).strict();
const notes = new Map<string, { id: string; text: string; version: number }>();
const find = (id: string) => {
  const note = notes.get(id);
  if (!note) throw new HttpProblem({ status: 404, code: "note_not_found", detail: `No note ${id}.` });
  return note;
};
const tag = (version: number) => etagFromVersion(version, { weak: false });

const router = createRouter().resource("/notes/{note_id}", (notes_) => {
  notes_.create({ body: NoteBody }, ({ body, created }) => {
    const note = { id: crypto.randomUUID(), text: body.text, version: 1 };
    notes.set(note.id, note);
    return created(note.id, note); // 201 + Location: /notes/<id>
  });
  notes_.read({}, ({ params }) => {
    const note = find(params.note_id);
    return json(200, note, { etag: tag(note.version), "cache-control": "no-cache" });
  });
  notes_.replace({ body: NoteBody }, ({ params, body }) => {
    const note = { ...find(params.note_id), text: body.text };
    note.version++;
    notes.set(note.id, note);
    return json(200, note, { etag: tag(note.version) });
  });
});

export const app = idempotency({ store: new MemoryIdempotencyStore(), identify: () => "demo" })(
  // 304 for a matching If-None-Match; 412 for a stale If-Match, before the handler runs.
  conditional(router.handler(), {
    validators: (request) => {
      const note = notes.get(decodeURIComponent(request.path.split("/")[2] ?? ""));
      return note && { etag: tag(note.version) };
    },
  }),
);

if (process.argv[1]?.endsWith("quick-start.ts")) createServer(app).listen(3000);
