// The fenced code blocks of a Markdown document, with the comment line just above each (its
// marker: how tests/checks/doc-snippets.test.ts holds it to the code, or which quick start it is).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../scripts/build.ts'

export interface Snippet {
  doc: string
  line: number
  lang: string
  code: string
  marker: string | undefined
}

/** The blocks whose fence names a language, in order; `text` defaults to the file `doc` (relative to the repository). */
export function snippets(doc: string, text = readFileSync(join(ROOT, doc), 'utf8')): Snippet[] {
  const lines = text.split('\n')
  const found: Snippet[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w+)\s*$/.exec(lines[i]!)
    if (!open) {
      if (/^\s*```/.test(lines[i]!)) i = closing(lines, i) // a fence with no language: skip its body
      continue
    }
    const indent = open[1]!
    const end = closing(lines, i)
    const code = lines
      .slice(i + 1, end)
      .map((line) => line.slice(indent.length))
      .join('\n')
    const above = lines
      .slice(0, i)
      .reverse()
      .find((line) => line.trim() !== '')
    const marker = above && /^\s*<!--([\s\S]*)-->\s*$/.exec(above)?.[1]?.trim()
    found.push({ doc, line: i + 1, lang: open[2]!, code, marker: marker || undefined })
    i = end
  }
  return found
}

function closing(lines: string[], open: number): number {
  for (let j = open + 1; j < lines.length; j++) if (/^\s*```\s*$/.test(lines[j]!)) return j
  throw new Error(`unclosed fence at line ${open + 1}`)
}

/** The quick starts (README.md's first, docs/quickstarts.md's others): each `<!-- quickstart: NAME -->` block's commands, one array of words per command (`&&` and lines split, comments dropped). */
export function quickStartCommands(): Map<string, string[][]> {
  const found = new Map<string, string[][]>()
  for (const s of ['README.md', 'docs/quickstarts.md'].flatMap((doc) => snippets(doc))) {
    const name = /^quickstart:\s*(\S+)$/.exec(s.marker ?? '')?.[1]
    if (!name) continue
    const commands = s.code
      .split('\n')
      .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
      .flatMap((line) => line.split('&&'))
      .map((command) => command.trim().split(/\s+/))
      .filter((words) => words[0] !== '')
    found.set(name, commands)
  }
  return found
}
