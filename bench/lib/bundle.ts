import { relative } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/** Something a page could import, as a one-line entry module. */
export interface BundleEntry {
  label: string
  contents: string
  /** Packages the page already ships and that are not counted (React, Next.js). */
  external?: string[]
}

export interface BundleSize {
  /** What loads with the page: the entry's chunk and the chunks it imports statically. */
  min: number
  gzip: number
  brotli: number
  /** With every chunk the entry can load lazily (dynamic `import()`s), each gzipped on its own. */
  allGzip: number
  /** Minified bytes each input file contributes, largest first (what `esbuild --analyze` shows); `lazy` when only a lazy chunk holds it. */
  inputs: Array<{ path: string; bytes: number; lazy: boolean }>
}

const REACT = ['react', 'react-dom', 'react/jsx-runtime']

/**
 * Updraft's browser entries, as a page imports them: by package name, so they resolve through
 * package.json `exports` to the built files in dist/lib (`npm run build`), what users install.
 * From the repository root that is Node's package self-reference; tests/package-consumer.test.ts
 * measures the same imports inside a project that installed the packed tarball.
 */
export const UPDRAFT_ENTRIES = {
  upload: {
    label: 'Updraft `upload()` (token + presigned, multipart, retries, abort, XHR; incl. SigV4)',
    contents: `export { upload } from 'updraft-s3'`,
  },
  token: {
    label: 'Updraft `uploadWithToken()` (token-only entry, incl. SigV4)',
    contents: `export { uploadWithToken } from 'updraft-s3/token'`,
  },
  presigned: {
    label: 'Updraft `uploadPresigned()` (presigned-only entry)',
    contents: `export { uploadPresigned } from 'updraft-s3/presigned'`,
  },
  react: {
    label: 'Updraft React `useS3Upload` (React external)',
    contents: `export { useS3Upload } from 'updraft-s3/react'`,
    external: REACT,
  },
  dropzone: {
    label: 'Updraft React `useS3Dropzone` (prop getters, limit checks; React external)',
    contents: `export { useS3Dropzone } from 'updraft-s3/react'`,
    external: REACT,
  },
  ui: {
    label:
      'Updraft React UI `UploadDropzone` + `UploadButton` (React external; CSS and the lazy thumbnail module apart)',
    contents: `export { UploadDropzone, UploadButton } from 'updraft-s3/react/ui'`,
    // Thumbnails and the unfinished-uploads list are dynamic imports: lazy chunks, loaded when an
    // image row is first seen, or by pages given `resume`.
    external: REACT,
  },
  recording: {
    label: 'Updraft React `useRecordingUpload` + `RecordButton` (record and upload at once; React external, CSS apart)',
    contents: `export { useRecordingUpload, RecordButton } from 'updraft-s3/react/recording'`,
    external: REACT,
  },
  checksums: {
    label: 'updraft-s3/checksums `checksum()` (opt-in: CRC32/CRC32C/MD5, the hashing worker, the checks)',
    contents: `export { checksum } from 'updraft-s3/checksums'`,
  },
  images: {
    label:
      'updraft-s3/images `shrinkImage()` + `shrinkImages()` (opt-in: resize and re-encode in a worker, the page fallback)',
    contents: `export { shrinkImage, shrinkImages } from 'updraft-s3/images'`,
  },
} satisfies Record<string, BundleEntry>

/** What people ship today for the same job. */
export const PEER_ENTRIES = {
  libStorage: {
    label: '`@aws-sdk/client-s3` S3Client + `@aws-sdk/lib-storage` Upload',
    contents: `export { S3Client } from '@aws-sdk/client-s3'; export { Upload } from '@aws-sdk/lib-storage'`,
  },
  nextS3Upload: {
    label: 'next-s3-upload `useS3Upload` (React, Next external)',
    contents: `export { useS3Upload } from 'next-s3-upload'`,
    external: [...REACT, 'next', 'next/*'],
  },
  uppy: {
    label: '`@uppy/core` + `@uppy/aws-s3`',
    contents: `export { default as Uppy } from '@uppy/core'; export { default as AwsS3 } from '@uppy/aws-s3'`,
  },
} satisfies Record<string, BundleEntry>

/**
 * Budgets of ARCHITECTURE.md ("Size discipline"), gzip bytes. KB = 1000 bytes, the unit
 * size-limit and bundlephobia print, so "6 KB" is 6000.
 */
export const BUDGETS: Array<{
  entry: keyof typeof UPDRAFT_ENTRIES
  goal: number
  limit: number
  allGoal?: number
  allLimit?: number
  what: string
}> = [
  // Measured code-split (issue 32): `limit`/`goal` bound what loads with the page, `allLimit`/
  // `allGoal` the same with every chunk it can load lazily (streams, aws4fetch), each gzipped alone.
  // Token mode signs through aws4fetch again, as the design says, loaded beside the first API
  // request (2698 B gzip on its own, the wrapper included); the hand-written signer it replaces
  // was ~0.8 KB and loaded with the page. The growth of the history before: docs/sizes.md.
  // The multipart machinery (the part loop, its S3 steps, presigned part URLs) is a lazy chunk too,
  // loaded beside the upload request when the body is over one part: with the page -499 / -427 /
  // -483 B, with every chunk +1.9 / +1.1 / +0.9 KB (each chunk gzipped alone, and the glue).
  // S3 Express through aws4fetch's own options (its slash runs sent as `/%2F`): +41 B in the signer's chunk.
  // One run owns the upload (progress, signer, part list on the run; issue 32) and `result.etag`
  // learned from /complete where storage's Complete names none (issue 33): +87 / +73 / +42 B with
  // the page, +135 / +131 / +37 B with every chunk; the React entries +86 / +91 / +93 B. Then the
  // part loop in a chunk of its own, shared by both modes' multipart code (the S3 steps signed in
  // the page stay out of presigned pages), and `/complete` always under the caller's signal:
  // 6733 / 5993 / 4638 B with the page, 13643 / 11905 / 7580 B with every chunk.
  // Issue 34: the engine's own limit of requests in flight per origin (6, `transport.connections`),
  // so the stall watchdog starts when a request can be sent, not while it waits in the browser for a
  // connection: 6828 / 6087 / 4735 B with the page (+96 / +94 / +97 B), 13740 / 11998 / 7680 B with
  // every chunk; the React entries +91 / +90 / +88 B. Then the run's `post` hook, through which the
  // React layer answers an upload request or `/complete` from a batch (src/batch-api.ts):
  // 6848 / 6108 / 4746 B (+20 / +21 / +11 B), 13761 / 12019 / 7688 B with every chunk. The React
  // entries carry the batching itself (batch-api, the start windows, ~1.9 KB min): 11191 / 13073 /
  // 20374 B measured (+728 / +712 / +694 B). Completions gathered while other files still send
  // (~0.25 → ~0.13 requests per file), and the list's one announcement for files that end together:
  // 11301 / 13181 / 20535 B (+110 / +108 / +161 B).
  // upload() refuses sseCustomerKey in token mode before the API is asked (its /complete cannot read
  // an object written with the page's key; issue 33): +89 B with the page, in every token entry.
  // upload() per file learns an API's token mode from one request: files started while it is
  // answered wait for it, instead of each asking token mode and being refused on a store with no
  // STS (1000 files: 1000 upload requests fewer): 7019 B with the page (+82 B), 13932 B with every
  // chunk; the React entries 11454 / 13336 / 20686 B (+64 / +71 / +68 B).
  // Issue 35: a network error says whom it could not reach (`NetworkError.to`, `origin`, so a page
  // names the upload API or storage rather than the network), and the API's `ServerMisconfigured`
  // is never retried: 7021 / 6283 / 4828 B with the page (+85 / +85 / +82 B), 13932 / 12194 /
  // 7774 B with every chunk. Both together: 7103 B with the page, 14014 B with every chunk.
  // Issue 34: S3 POST forms (`formUploads`; engine/s3/form.ts, its own chunk, loaded beside the
  // upload request that asks for a form): 7185 / 6298 / 4913 B with the page (+112 / +31 / +108 B:
  // the mode's choice of PUT or form, progress counted from the file's first byte), 14404 / 12211 /
  // 8162 B with every chunk (the form chunk, ~310 B gzipped alone); the React entries +109 / +105 /
  // +121 / +104 B.
  // Issue 37's recordings finished after a closed tab: `upload()`'s `fingerprint` option (a stream
  // journaled under it), and presigned parts of a file carrying on a ticket of unknown length
  // (each URL asked with its length): 7089 / 6287 / 4826 B with the page (+16 / +19 / +21 B),
  // 14079 / 12205 / 7853 B with every chunk (+91 / +25 / +105 B).
  // Both merged: 7201 / 6319 / 4934 B with the page, 14497 / 12238 / 8268 B with every chunk.
  { entry: 'upload', goal: 6000, limit: 7210, allLimit: 14505, what: 'full path (`upload()`, token + presigned)' },
  {
    entry: 'token',
    goal: 6000,
    limit: 6325,
    allGoal: 9000,
    allLimit: 12245,
    what: 'token-only path (`uploadWithToken()`)',
  },
  {
    entry: 'presigned',
    goal: 3000,
    limit: 4940,
    allGoal: 5000,
    allLimit: 8275,
    what: 'presigned-only path (`uploadPresigned()`)',
  },
  // The React layer, React external. Each carries `upload()`, so issue 11's ~1.1 KB of base-path
  // reliability raised these limits by as much over the goals (measured before it landed), and
  // issue 14's redirect hook, the callback guard and issue 16's part URLs ahead by ~90 B, issue 14's checksum hook by ~76 B, its directory-bucket session hook by +15-16 B (measured). The hook carries `upload()` (6.5 KB) plus fair scheduling,
  // list controls and the leave-page warning (8876 B when set); the dropzone hook adds the prop
  // getters, folder walking and the limit checks (10617 B); the components add rows, messages and
  // the overall bar (16019 B; the thumbnail module behind a dynamic import, ~0.3 KB, and the CSS,
  // 2.4 KB, apart). Issue 12's `/complete` and `serverData` on entries: measured +13 / +9 B; the
  // components also show a server note per row and a refused completion's reason: +89 B.
  // Issue 13: the engine's pause hooks, each entry's pause()/resume() with the PauseController
  // machinery and the offline watch, a paused file giving its start slot back, the rows'
  // Pause/Resume and "Waiting for the network", and the lazy loader of the unfinished-uploads list
  // (its own chunk, ~0.6 KB, loaded only with `resume`): 11622 / 13353 / 19055 B
  // measured with issue 12 (about +1327 / +1323 / +1525 B over its limits).
  // Issue 16's API-created token uploads, carried by `upload()`: 12330 / 14057 / 19799 B measured (+78 / +80 / +92 B).
  // Issue 22's SigV4 signer in aws4fetch's stead, carried by `upload()`: 10586 / 12333 / 18050 B measured (-1744 / -1724 / -1749 B).
  // Issue 22: the engine's run state and retry predicate as above, and the hooks' internal uploader
  // context (tests inject a stand-in through it; no public type carries it): 10740 / 12475 / 18193 B;
  // with the pause rule and retry defaults above 10764 / 12500 / 18226 B.
  // Issue 22's size work in the engine they carry (above; the hooks import PauseController, so they
  // ship the pause machinery as before, now from its own module): 10559 / 12285 B measured
  // (-205 / -215 B). Issue 24's engine tails (above): 10630 / 12352 B measured.
  // Issue 27's drop zone anyone can use (react-dropzone's role="button", tabIndex 0, Space/Enter
  // open the dialog, drag targets as a set for Firefox's doubled dragenter): +110 B; with all the
  // above, 12470 B measured.
  // Issue 35: the engine's part above (+85 B), and in the dropzone hook a refused file's message in
  // units ("101 MiB is over the 100 MiB limit", protocol/bytes.ts): 11485 / 13555 B measured; with
  // the token-mode probe above, 11548 / 13618 B.
  // Issue 35: `retry(id)` lists the new upload in the old entry's place (see the dropzone below): +60 B, 11455 B measured.
  // Issue 35: `retry(id)` lists the new upload in the old entry's place (a retried row had moved to
  // the bottom, and the second click of a double click on its Retry cancelled the row that slid up
  // under the pointer): +61 B, 13331 B measured.
  // All of issue 35 with the token-mode probe: 11613 / 13694 B measured.
  // Issue 37: the hooks' `prepare` (the prepared file sent, the list's check run on it, its size on
  // the entry, PrepareError and its words, Cancel while a preparer runs): 12001 / 14054 B measured
  // (+389 / +360 B); the components +376 B. What prepares (updraft-s3/images) is apart.
  // Issue 37: the `preparing` status until `prepare` gives the file: 12020 / 14080 B measured.
  // Issue 37's `fingerprint` in the `upload()` they carry (above): 12038 / 14106 B measured (+18 / +26 B).
  // With issue 34's POST forms (above): 12132 / 14185 B measured; the components 22400 B. With
  // both merged: 12147 / 14206 B; the components 22415 B.
  { entry: 'react', goal: 9000, limit: 12155, what: 'React hook (`useS3Upload`, incl. `upload()`)' },
  { entry: 'dropzone', goal: 10800, limit: 14215, what: 'React dropzone hook (`useS3Dropzone`)' },
  // Rows memoised with stable callbacks and one ref callback per row (a long folder drop re-rendered
  // every row on every progress tick): +56 B. Issue 14's directory-bucket session hook: +15 B measured.
  // Issue 23's rows that hold still and tell the truth ("Resuming…" until bytes move again, the
  // paused summary, widths that do not change on Copy or Cancel, done only with a full bar, a
  // double click that cannot remove or restart a row, unbreakable figures): 18638 B measured. A rate only from a whole second of moving bytes (no
  // "16 KiB/s · 23 min left" on a 2 MiB/s link right after Resume): 18672 B measured. Issue 22's
  // size work in the engine they carry: 18465 B measured (-207 B). Issue 24's engine tails: 18530 B.
  // Issue 27: the drop zone's keyboard and drag-target set as above, the zones marked as labelled
  // groups, and the words for a reply the page cannot read (a refusal CORS hid, as Swift's error
  // replies always are, or offline): +280 B; with all the above, 18818 B measured.
  // Measured code-split since issue 32 (the lazy chunks apart, the entry's shared chunks counted
  // each gzipped alone): 19684 B for the same code that measured 18818 B in one file.
  // Issue 35: errors that say their cause — what the page cannot reach, a misconfigured server, a
  // refused signature or bucket, `isFinal` (no Retry for what cannot change), sizes over a limit
  // told apart: 21092 B measured (+473 B with the engine's +85 B); with the token-mode probe 21166 B.
  // Issue 35's rows that stay put: Retry in place (above), a double click that never acts on a
  // button it did not begin on, one speed per row shared by the row and the summary (told after two
  // growing samples: no "0 B/s" or "24596 h" after Resume in Firefox), a summary that counts
  // cancelled files apart and bars what was stored of all picked, figures whose wrapped lines start
  // without a lone "·", "Finishing…" saying what it waits for, and the unfinished list saying in
  // bytes what Resume sends: +669 B, 21294 B measured.
  // Both parts of issue 35 together, with the token-mode probe: 21854 B measured.
  // Issue 37's `preparing` status (a row that says "Preparing…" while `prepare` shrinks its photo,
  // and the summary's "2 preparing"): 22283 B measured with the images work before it. With issue
  // 37's `fingerprint` in `upload()`: 22303 B (+20 B). A failed row's sentence cut to one line with
  // a Details button (aria-expanded) in place of a <details> line under it: 22480 B (+80 B).
  {
    entry: 'ui',
    goal: 16200,
    limit: 22505,
    what: 'React components (`UploadDropzone`, `UploadButton`; CSS and thumbnails apart)',
  },
  // Issue 37: record and upload at once, an entry of its own (`updraft-s3/react/recording`): pages that
  // do not record ship none of it. It carries `upload()` (7103 B) and the streams' lazy chunk (the
  // gatherer, loaded with the first chunk), the recorder glue, the hook and the button, and
  // `errorMessage` for upload failures in words (3.5 KB min): 12451 B with the page, 19362 B with
  // every chunk, measured; 12483 B / 19394 B once merged with issue 37's images (`errorMessage`
  // words `PrepareError`).
  // A recording kept in the origin-private file system and finished on the next visit: the hook's
  // `unfinished` list with `finish`/`discard` and the button's "A recording was interrupted" (+987 B
  // with the page: 13470 B measured); the copy's code and the engine's resume (its journal, ListParts,
  // the records in IndexedDB: 5.0 KB min) in a lazy chunk loaded when a recording starts or the hook
  // mounts where the browser can keep a copy: 23849 B with every chunk (+4451 B). The hook and the
  // button import `upload()` and the errors from their own modules, not the engine's entry, which
  // would put resume in the page's chunks (esbuild splits by reachability, before tree-shaking: +2.3 KB).
  // With issue 34's POST forms merged: 13583 B with the page, 24268 B with every chunk.
  {
    entry: 'recording',
    goal: 12500,
    limit: 13595,
    allLimit: 24280,
    what: 'React recording (`useRecordingUpload`, `RecordButton`; CSS apart)',
  },
  // An opt-in, off every base path: pages that import it pay for it. Issue 14: 2110 B with the
  // hashing on the calling thread; the worker that takes the hashing off a page's main thread (its
  // pool, the fallback, its program as source text, Node's timers unreferenced) made it 2961 B
  // measured (+851 B). Refusing MD5 for a directory bucket (S3 Express takes none) with a
  // message that names the way out: 3032 B measured (+72 B).
  // Issue 37: the Blob-URL worker start shared with updraft-s3/images (opt-ins/blob-worker.ts): 3052 B (+20 B).
  { entry: 'checksums', goal: 3000, limit: 3055, what: 'opt-in `checksum()` (`updraft-s3/checksums`)' },
  // Issue 37: `shrinkImage()` and `shrinkImages()`, off every other entry: the options checked, the
  // fit, type and name rules, APNG/animated-WebP detection, the drawing program (worker and page),
  // the one-worker pool with its page fallback: 2085 B measured.
  { entry: 'images', goal: 2000, limit: 2100, what: 'opt-in `shrinkImage()` (`updraft-s3/images`)' },
]

/**
 * esbuild for the browser, ESM, minified and code-split, as a page's bundler ships it: every
 * dynamic `import()` becomes a chunk of its own. `gzip` counts what loads with the page (the
 * entry's chunk and what it imports statically), `allGzip` every chunk, each gzipped alone as a
 * browser fetches it. Imports resolve from `resolveDir` (Updraft's built package from the
 * repository root, or from a consumer project). gzip at level 9 and brotli at quality 11, the
 * levels size-limit and bundlephobia report.
 */
export async function measureBundle(entry: BundleEntry, resolveDir = process.cwd()): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: entry.contents, loader: 'ts', resolveDir, sourcefile: 'entry.ts' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    splitting: true,
    outdir: 'out',
    write: false,
    metafile: true,
    logLevel: 'error',
    external: entry.external ?? [],
    define: { 'process.env.NODE_ENV': '"production"' },
  })
  const outputs = result.metafile.outputs
  const code = new Map(result.outputFiles.map((file) => [relative(process.cwd(), file.path), file.contents]))
  const entryChunk = Object.keys(outputs).find((path) => outputs[path]!.entryPoint)!
  // The chunks the page loads at once: the entry's, and what it (transitively) imports statically.
  const initial = new Set<string>()
  const visit = (path: string) => {
    if (initial.has(path)) return
    initial.add(path)
    for (const imported of outputs[path]!.imports)
      if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path)
  }
  visit(entryChunk)
  const bytesOf = (paths: Iterable<string>, measure: (bytes: Uint8Array) => number) =>
    [...paths].reduce((sum, path) => sum + measure(code.get(path)!), 0)
  const gzip = (bytes: Uint8Array) => gzipSync(bytes, { level: 9 }).length
  const inputs = new Map<string, { path: string; bytes: number; lazy: boolean }>()
  for (const [chunk, { inputs: chunkInputs }] of Object.entries(outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(chunkInputs)) {
      if (bytesInOutput === 0) continue
      const seen = inputs.get(path) ?? { path, bytes: 0, lazy: true }
      inputs.set(path, { path, bytes: seen.bytes + bytesInOutput, lazy: seen.lazy && !initial.has(chunk) })
    }
  }
  return {
    min: bytesOf(initial, (bytes) => bytes.length),
    gzip: bytesOf(initial, gzip),
    brotli: bytesOf(
      initial,
      (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    ),
    allGzip: bytesOf(code.keys(), gzip),
    inputs: [...inputs.values()].sort((a, b) => b.bytes - a.bytes),
  }
}
