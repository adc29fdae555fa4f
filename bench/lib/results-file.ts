// bench/RESULTS.md read back: its sections' tables (to redraw the charts without a re-run, issue
// 23) and a section replaced in place by a fresh run of that benchmark alone (`--update`), with its
// headline, goal rows and closing-note lines in the header, the other sections left as they are.
import { markdownSection, type Section, type Table } from './report.ts'

export interface StoredSection {
  title: string
  tables: Table[]
}

/** Every `## N. Title` section of RESULTS.md with its `**title**` + Markdown tables. */
export function parseResults(markdown: string): StoredSection[] {
  return sectionChunks(markdown).map(({ title, text }) => ({ title, tables: parseTables(text) }))
}

export function parseTables(markdown: string): Table[] {
  const tables: Table[] = []
  const pattern = /^\*\*(.+)\*\*\n\n((?:\|.*\|\n?)+)/gm
  for (const match of markdown.matchAll(pattern)) {
    const lines = match[2]!.trim().split('\n')
    if (lines.length < 2) continue
    const [header, , ...body] = lines.map(cells)
    tables.push({ title: match[1]!, columns: header!, rows: body })
  }
  return tables
}

/**
 * RESULTS.md with `section` in place of the section of the same title (appended when absent); its
 * header's lines for that benchmark (headlines that start as the new ones do, the goal rows, the
 * closing-note lines of the old goals) replaced by the new ones. `provenance` opens the section.
 */
export function spliceSection(markdown: string, section: Section, provenance: string): string {
  const chunks = sectionChunks(markdown)
  const old = chunks.find((chunk) => chunk.title === section.title)
  const fresh = markdownSection(section).replace(/^## .*\n/, (heading) => `${heading}\n${provenance}\n`)
  const text = old
    ? `${markdown.slice(0, old.start) + fresh}\n${markdown.slice(old.end).replace(/^\n*/, '\n')}`
    : `${markdown.trimEnd()}\n\n${fresh}\n`

  const lines = text.split('\n')
  const goalRow = `| ${section.name} | `
  const oldGoals = lines.filter((line) => line.startsWith(goalRow)).map((line) => cells(line)[1]!)
  const keyOf = (headline: string) => headline.slice(0, headline.indexOf(':') + 1)
  const headlineKeys = section.headlines.map(keyOf).filter(Boolean)
  // Only the header (above the first numbered section) holds these lines.
  const replace = (isOld: (line: string) => boolean, fresh: string[], anchor: string) => {
    const limit = firstSection(lines)
    const old = lines.flatMap((line, index) => (index < limit && isOld(line) ? [index] : []))
    for (const index of [...old].reverse()) lines.splice(index, 1)
    const at = old.length > 0 ? old[0]! : lines.indexOf(anchor) + (anchor.startsWith('|') ? 1 : 2)
    lines.splice(at, 0, ...fresh)
  }
  replace(
    (line) => line.startsWith('- ') && headlineKeys.some((key) => line.startsWith(`- ${key}`)),
    section.headlines.map((line) => `- ${line}`),
    '## Headlines',
  )
  replace(
    (line) => line.startsWith(goalRow),
    section.goals.map((goal) => `| ${section.name} | ${goal.goal} | ${goal.figure} | ${goal.met ? 'met' : 'MISSED'} |`),
    '|---|---|---|---|',
  )
  replace(
    (line) =>
      oldGoals.some((goal) => line.startsWith(`- **Met: ${goal}**`) || line.startsWith(`- **Missed: ${goal}**`)),
    section.goals.map(
      (goal) =>
        `- **${goal.met ? 'Met' : 'Missed'}: ${goal.goal}** (${goal.figure}).${goal.note ? ` ${goal.note}` : ''}`,
    ),
    '## Closing note',
  )
  return lines.join('\n')
}

function firstSection(lines: readonly string[]): number {
  const index = lines.findIndex((line) => SECTION_HEADING.test(line))
  return index < 0 ? lines.length : index
}

/**
 * Sections are the numbered headings, `## 2. ` or `## 2b. ` (one added beside another); the
 * header's own `## Headlines` etc. are not numbered.
 */
const SECTION_HEADING = /^## (\d+[a-z]?\. .+)$/m

function sectionChunks(markdown: string): Array<{ title: string; text: string; start: number; end: number }> {
  const starts = [...markdown.matchAll(new RegExp(SECTION_HEADING, 'gm'))].map((match) => ({
    title: match[1]!,
    start: match.index!,
  }))
  return starts.map(({ title, start }, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.start : markdown.length
    return { title, start, end, text: markdown.slice(start, end) }
  })
}

/** `| a | b \| c |` → ['a', 'b | c'] (markdownTable escapes a cell's pipes). */
function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, '|'))
}
