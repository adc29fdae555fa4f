import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../scripts/build.ts'

// The benchmark figures README.md and docs/*.md quote from bench/RESULTS.md, which
// `npm run bench -- NAME --update` writes, are held to it: one source. A quoted figure is marked by a
// comment right before it (never at the start of a line), `<!-- figure: bundle.upload.gzip -->6.66 KB`, naming a row of FIGURES below, which says
// where RESULTS.md holds it. After a bench run rewrites RESULTS.md this test names each doc line
// whose figure no longer matches, with both values. It reads checked-in files only: it does not
// depend on the machine it runs on.

const RESULTS = readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8')
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]

/** The text of RESULTS.md's section `## N. …`, up to the next `## `. */
function section(number: string): string {
  const start = RESULTS.indexOf(`\n## ${number}. `)
  if (start < 0)
    throw new Error(
      `bench/RESULTS.md has no section "## ${number}."; update FIGURES in tests/checks/doc-figures.test.ts.`,
    )
  const end = RESULTS.indexOf('\n## ', start + 1)
  return RESULTS.slice(start, end < 0 ? undefined : end)
}

/** The cells of the first table row of `text`, after the line containing `after`, whose cells satisfy `match`. */
function row(text: string, after: string, match: (cells: string[]) => boolean): string[] {
  const from = text.indexOf(after)
  if (from < 0)
    throw new Error(`bench/RESULTS.md has no "${after}"; update FIGURES in tests/checks/doc-figures.test.ts.`)
  for (const line of text.slice(from).split('\n')) {
    if (!line.startsWith('|')) continue
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim())
    if (match(cells)) return cells
  }
  throw new Error(
    `bench/RESULTS.md has no row for this figure after "${after}"; update FIGURES in tests/checks/doc-figures.test.ts.`,
  )
}

const kb = (bytes: string) => `${(Number(bytes) / 1000).toFixed(2)} KB`
const startsWith = (label: string) => (cells: string[]) => cells[0]!.startsWith(label)

// Section 1, "Bytes shipped": label, min B, gzip B with the page, gzip B with lazy chunks, brotli B, ratio.
const bundle = (label: string) => row(section('1'), '**Bytes shipped**', startsWith(label))
// Section 2, null sink at queue 4: queue, client, MB/s, vs lib-storage, vs fetch ceiling, …
const node = (client: string) =>
  row(section('2'), '**null sink: 256 MiB', (c) => c[0] === '4' && c[1]!.startsWith(client))
// Section 3, cells with queue <= 6: queue, part MiB, in flight, null sink share, RGW share, worst share.
const sweep = (part: string) => row(section('3'), '**Cells with queue <= 6', (c) => c[0] === '4' && c[1] === part)
// Section 4, Chromium to null sink: client, MB/s, vs raw XHR ceiling, vs lib-storage, …
const chromium = (client: string) => row(section('4'), '**Chromium to null sink', startsWith(client))
// Section 5, peak growth of a 1024 MiB file: client, MB/s, idle RSS, peak growth MiB, growth / goal.
const memory = (table: string, client: string) => row(section('5'), table, startsWith(client))
// Section 6, presigns per CPU-second: presigner, presigns / CPU-s, µs each, vs getSignedUrl.
const presign = (presigner: string) => row(section('6'), '**Part-URL presigns', startsWith(presigner))

// Section 10, many small files: client, s, vs raw page, API requests / file, …
const manyFiles = (table: string, client: string) => row(section('10'), table, startsWith(client))
const SMALL_FILES_HOME = '**1000 × 8–32 KiB, home broadband'
const SMALL_FILES_SLOW = '**1000 × 8–32 KiB, 20 Mbit/s, 150 ms RTT'

const NODE_MEMORY = '**Node: 1024 MiB'
const CHROMIUM_MEMORY = '**Chromium: 1024 MiB file picked through <input type=file>, 8 MiB'

/** Each figure the docs may quote: where RESULTS.md holds it (for the failure message) and its text as quoted. */
const FIGURES: Record<string, { where: string; value: () => string }> = {
  'bundle.upload.gzip': { where: 'section 1, Bytes shipped', value: () => kb(bundle('Updraft `upload()`')[2]!) },
  'bundle.upload.lazy': { where: 'section 1, Bytes shipped', value: () => kb(bundle('Updraft `upload()`')[3]!) },
  'bundle.token.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft `uploadWithToken()`')[2]!),
  },
  'bundle.token.lazy': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft `uploadWithToken()`')[3]!),
  },
  'bundle.presigned.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft `uploadPresigned()`')[2]!),
  },
  'bundle.presigned.lazy': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft `uploadPresigned()`')[3]!),
  },
  'bundle.react.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft React `useS3Upload`')[2]!),
  },
  'bundle.dropzone.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('Updraft React `useS3Dropzone`')[2]!),
  },
  'bundle.ui.gzip': { where: 'section 1, Bytes shipped', value: () => kb(bundle('Updraft React UI')[2]!) },
  'bundle.checksums.gzip': { where: 'section 1, Bytes shipped', value: () => kb(bundle('updraft-s3/checksums')[2]!) },
  'bundle.signer.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('for reference: the SigV4 signer')[2]!),
  },
  'bundle.lib-storage.gzip': {
    where: 'section 1, Bytes shipped',
    value: () => kb(bundle('`@aws-sdk/client-s3` S3Client')[2]!),
  },
  'node.updraft.rate': {
    where: 'section 2, null sink, queue 4',
    value: () => `${node('Updraft (Node default')[2]} MB/s`,
  },
  'node.updraft.vs-lib-storage': {
    where: 'section 2, null sink, queue 4',
    value: () => node('Updraft (Node default')[3]!,
  },
  'node.updraft.vs-fetch-ceiling': {
    where: 'section 2, null sink, queue 4',
    value: () => node('Updraft (Node default')[4]!,
  },
  'node.fetch.rate': { where: 'section 2, null sink, queue 4', value: () => `${node('Updraft over fetch')[2]} MB/s` },
  'node.fetch.vs-lib-storage': { where: 'section 2, null sink, queue 4', value: () => node('Updraft over fetch')[3]! },
  'node.buffer.rate': {
    where: 'section 2, null sink, queue 4',
    value: () => `${node('Updraft, a Node `Buffer` body')[2]} MB/s`,
  },
  'node.lib-storage.rate': {
    where: 'section 2, null sink, queue 4',
    value: () => `${node('`@aws-sdk/lib-storage`')[2]} MB/s`,
  },
  'concurrency.q4-16MiB.worst-share': { where: 'section 3, cells with queue <= 6', value: () => sweep('16')[5]! },
  'concurrency.q4-5MiB.worst-share': { where: 'section 3, cells with queue <= 6', value: () => sweep('5')[5]! },
  'chromium.updraft.rate': { where: 'section 4, Chromium to null sink', value: () => `${chromium('Updraft')[1]} MB/s` },
  'chromium.updraft.vs-ceiling': { where: 'section 4, Chromium to null sink', value: () => chromium('Updraft')[2]! },
  'chromium.updraft.vs-lib-storage': {
    where: 'section 4, Chromium to null sink',
    value: () => chromium('Updraft')[3]!,
  },
  'chromium.lib-storage.rate': {
    where: 'section 4, Chromium to null sink',
    value: () => `${chromium('`@aws-sdk/lib-storage`')[1]} MB/s`,
  },
  'memory.node.updraft': {
    where: 'section 5, Node: 1024 MiB',
    value: () => `+${memory(NODE_MEMORY, 'Updraft (Node default')[3]} MiB`,
  },
  'memory.node.lib-storage': {
    where: 'section 5, Node: 1024 MiB',
    value: () => `+${memory(NODE_MEMORY, '`@aws-sdk/lib-storage`')[3]} MiB`,
  },
  'memory.chromium.updraft': {
    where: 'section 5, Chromium: 1024 MiB',
    value: () => `+${memory(CHROMIUM_MEMORY, 'Updraft (XHR)')[3]} MiB`,
  },
  'memory.chromium.lib-storage': {
    where: 'section 5, Chromium: 1024 MiB',
    value: () => `+${memory(CHROMIUM_MEMORY, '`@aws-sdk/lib-storage`')[3]} MiB`,
  },
  'presign.prepared': {
    where: 'section 6, Part-URL presigns',
    value: () => presign('`S3RequestPresigner.presign`')[1]!,
  },
  'presign.getSignedUrl': { where: 'section 6, Part-URL presigns', value: () => presign('`getSignedUrl(')[1]! },
  'presign.vs-getSignedUrl': {
    where: 'section 6, Part-URL presigns',
    value: () => presign('`S3RequestPresigner.presign`')[3]!,
  },
  'many-files.hook.home.requests': {
    where: 'section 10, 1000 × 8–32 KiB, home broadband',
    value: () => manyFiles(SMALL_FILES_HOME, '`useS3Upload`')[3]!,
  },
  'many-files.hook.home.vs-raw': {
    where: 'section 10, 1000 × 8–32 KiB, home broadband',
    value: () => manyFiles(SMALL_FILES_HOME, '`useS3Upload`')[2]!,
  },
  'many-files.uppy.home.vs-raw': {
    where: 'section 10, 1000 × 8–32 KiB, home broadband',
    value: () => manyFiles(SMALL_FILES_HOME, '`@uppy/aws-s3`')[2]!,
  },
  'many-files.hook.slow.vs-raw': {
    where: 'section 10, 1000 × 8–32 KiB, 150 ms RTT',
    value: () => manyFiles(SMALL_FILES_SLOW, '`useS3Upload`')[2]!,
  },
}

interface Quote {
  doc: string
  line: number
  key: string
  /** The doc's text right after the marker, to the end of its line. */
  text: string
  /** Nothing but spaces before the marker: Markdown then starts an HTML block, and shows the line's Markdown raw. */
  startsLine: boolean
}

const MARKER = /<!-- figure: ([\w.-]+) -->/g

/** Every marked figure of one doc's text. */
function quotes(doc: string, source: string): Quote[] {
  return source.split('\n').flatMap((lineText, index) =>
    [...lineText.matchAll(MARKER)].map((match) => ({
      doc,
      line: index + 1,
      key: match[1]!,
      text: lineText.slice(match.index! + match[0].length),
      startsLine: lineText.slice(0, match.index).trim() === '',
    })),
  )
}

/** What the doc quotes: a number with its sign, thousands separators and unit. */
const quoted = (text: string) =>
  /^[+-]?\d+(?:[ ,]\d{3})*(?:\.\d+)?(?: ?(?:KB|MB\/s|MiB|x|%))?/.exec(text)?.[0] ?? `"${text.slice(0, 20)}"`

/** One sentence per marked figure that differs from RESULTS.md, or whose key FIGURES does not know. */
function mismatches(all: Quote[]): string[] {
  return all.flatMap((q) => {
    const figure = FIGURES[q.key]
    if (!figure)
      return [
        `${q.doc}:${q.line} marks an unknown figure "${q.key}"; add it to FIGURES in tests/checks/doc-figures.test.ts.`,
      ]
    if (q.startsLine)
      return [
        `${q.doc}:${q.line} starts its line with the marker of ${q.key}, which shows the line's Markdown raw; put a word before it.`,
      ]
    const expected = figure.value()
    return quoted(q.text) === expected
      ? []
      : [
          `${q.doc}:${q.line} quotes ${quoted(q.text)} for ${q.key}; bench/RESULTS.md (${figure.where}) has ${expected}.`,
        ]
  })
}

const all = DOCS.flatMap((doc) => quotes(doc, readFileSync(join(ROOT, doc), 'utf8')))

describe('doc figures', () => {
  it('finds every figure of bench/RESULTS.md it knows', () => {
    for (const [key, figure] of Object.entries(FIGURES))
      expect(figure.value(), key).toMatch(/^\+?\d[\d.]*( KB| MB\/s| MiB|x|%)?$/)
  })

  it('each known figure is quoted somewhere, marked', () => {
    const used = new Set(all.map((q) => q.key))
    expect(Object.keys(FIGURES).filter((key) => !used.has(key))).toEqual([])
  })

  it('README and docs quote bench/RESULTS.md’s figures as they are', () => {
    expect(mismatches(all)).toEqual([])
  })

  it('names the doc, line, quoted value and RESULTS.md’s value when a figure differs', () => {
    const doc =
      'Ships <!-- figure: bundle.upload.gzip -->1.23 KB gzip.\nAnd <!-- figure: no.such -->4x.\n  <!-- figure: bundle.upload.gzip -->6.66 KB'
    const found = mismatches(quotes('docs/x.md', doc))
    expect(found).toEqual([
      `docs/x.md:1 quotes 1.23 KB for bundle.upload.gzip; bench/RESULTS.md (section 1, Bytes shipped) has ${FIGURES['bundle.upload.gzip']!.value()}.`,
      'docs/x.md:2 marks an unknown figure "no.such"; add it to FIGURES in tests/checks/doc-figures.test.ts.',
      "docs/x.md:3 starts its line with the marker of bundle.upload.gzip, which shows the line's Markdown raw; put a word before it.",
    ])
  })
})
