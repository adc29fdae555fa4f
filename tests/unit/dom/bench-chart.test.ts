// bench/lib/chart.ts (the SVG bar charts of bench/charts/) and the path from RESULTS.md's tables
// back to charts: structure, proportions, escaping, determinism.
import { describe, expect, it } from 'vitest'
import { axisTicks, type BarChart, barChart } from '../../../bench/lib/chart.ts'
import { bundleCharts, networkCharts } from '../../../bench/lib/chart-specs.ts'
import { markdownTable } from '../../../bench/lib/report.ts'
import { parseTables, spliceSection } from '../../../bench/lib/results-file.ts'

const parse = (svg: string) => {
  const document = new DOMParser().parseFromString(svg, 'image/svg+xml')
  expect(document.getElementsByTagName('parsererror')).toHaveLength(0)
  return document
}

const chart: BarChart = {
  title: 'Sizes & <things>',
  description: 'A test chart.',
  unit: 'KB',
  groups: [
    {
      title: 'Ours',
      bars: [
        { label: 'a & b', value: 10, kind: 'updraft' },
        { label: '<script>alert(1)</script>', value: 20 },
      ],
    },
    { bars: [{ label: 'c "quoted"', value: 40, kind: 'ceiling' }] },
  ],
  references: [{ value: 30, label: 'goal < 30' }],
}

describe('barChart', () => {
  it('draws one bar per value, lengths proportional to the values', () => {
    const document = parse(barChart(chart))
    const bars = [...document.querySelectorAll('rect')].filter((rect) => rect.querySelector('title'))
    expect(bars).toHaveLength(3)
    const widths = bars.map((bar) => Number(bar.getAttribute('width')))
    expect(widths[1]! / widths[0]!).toBeCloseTo(2, 1)
    expect(widths[2]! / widths[0]!).toBeCloseTo(4, 1)
    // every bar starts at the same x: lengths, not positions, carry the value
    expect(new Set(bars.map((bar) => bar.getAttribute('x'))).size).toBe(1)
  })

  it('escapes labels, so & < " in a label cannot break the SVG or inject markup', () => {
    const svg = barChart(chart)
    const document = parse(svg)
    expect(document.querySelector('script')).toBeNull()
    const texts = [...document.querySelectorAll('text')].map((text) => text.textContent)
    expect(texts).toEqual(
      expect.arrayContaining(['Sizes & <things>', 'a & b', '<script>alert(1)</script>', 'c "quoted"', 'goal < 30']),
    )
    expect(svg).not.toContain('<script>')
  })

  it('is accessible: a <title> and a <desc> naming every figure, words as <text>, not paths', () => {
    const svg = barChart(chart)
    const document = parse(svg)
    const root = document.documentElement
    expect(root.getAttribute('role')).toBe('img')
    const [titleId, descId] = root.getAttribute('aria-labelledby')!.split(' ')
    expect(document.getElementById(titleId!)?.textContent).toBe('Sizes & <things>')
    const desc = document.getElementById(descId!)!.textContent!
    for (const figure of ['a & b 10 KB', '<script>alert(1)</script> 20 KB', 'c "quoted" 40 KB', 'goal < 30'])
      expect(desc).toContain(figure)
    expect(document.querySelector('path')).toBeNull()
  })

  it('paints its own background and names its colours (GitHub shows it on light and dark pages)', () => {
    const document = parse(barChart(chart))
    const background = document.querySelector('svg > rect')!
    expect(background.getAttribute('fill')).toBe('#ffffff')
    expect(Number(background.getAttribute('width'))).toBeGreaterThan(700)
    for (const text of document.querySelectorAll('text')) expect(text.getAttribute('fill')).toMatch(/^#[0-9a-f]{6}$/)
  })

  it('draws a reference line at its value, on the bars scale', () => {
    const document = parse(barChart(chart))
    const bars = [...document.querySelectorAll('rect')].filter((rect) => rect.querySelector('title'))
    const left = Number(bars[0]!.getAttribute('x'))
    const perUnit = Number(bars[0]!.getAttribute('width')) / 10
    const line = [...document.querySelectorAll('line')].find((line) => line.getAttribute('stroke-dasharray'))!
    expect(Number(line.getAttribute('x1'))).toBeCloseTo(left + 30 * perUnit, 0)
  })

  it('gives the same bytes for the same input', () => {
    expect(barChart(structuredClone(chart))).toBe(barChart(chart))
  })

  it('ends its axis on a round tick past the largest value', () => {
    expect(axisTicks(123.13)).toEqual([0, 25, 50, 75, 100, 125])
    expect(axisTicks(100)).toEqual([0, 20, 40, 60, 80, 100])
    expect(axisTicks(148)).toEqual([0, 50, 100, 150])
  })
})

describe('charts from the tables RESULTS.md holds', () => {
  it('reads a printed table back and draws the same chart as from the table itself', () => {
    const table = {
      title: 'Bytes shipped',
      columns: [
        'bundle',
        'min B (with the page)',
        'gzip B (with the page)',
        'gzip B (with lazy chunks)',
        'brotli B',
        'gzip vs Updraft upload()',
      ],
      rows: [
        ['Updraft `upload()` (token + presigned, incl. SigV4)', '17199', '7487', '11400', '6805', '1.00x'],
        ['Updraft React `useS3Upload` (React external)', '26429', '10764', '14744', '9813', '1.44x'],
        [
          '`@aws-sdk/client-s3` S3Client + `@aws-sdk/lib-storage` Upload',
          '354151',
          '110504',
          '110504',
          '93195',
          '14.76x',
        ],
        ['a | piped & <odd> label', '1', '1000', '1000', '1', '0.13x'],
      ],
    }
    const parsed = parseTables(`## 1. Bundle\n\n${markdownTable(table)}\n\n_2 s_\n`)
    expect(parsed).toEqual([table])
    const [fromRun] = bundleCharts([table])
    const [fromFile] = bundleCharts(parsed)
    expect(barChart(fromFile!.chart)).toBe(barChart(fromRun!.chart))
    const labels = fromRun!.chart.groups.flatMap((group) => group.bars.map((bar) => `${bar.label} ${bar.text}`))
    expect(labels).toEqual([
      'Updraft upload() 7.49 KB',
      '@aws-sdk/lib-storage 110.50 KB',
      'a | piped & <odd> label 1.00 KB',
      'Updraft React useS3Upload 10.76 KB',
    ])
    parse(barChart(fromRun!.chart))
  })

  it('draws the fraction of the link per profile and contender, leaving out the link itself', () => {
    const table = (profile: string) => ({
      title: `${profile}, Node: 64 MiB, median of 3`,
      columns: ['client', 'MB/s', 'fraction of link', 'first byte ms (RTTs)', 'extra up KiB'],
      rows: [
        ['the link itself (line rate)', '12.5', '100%', '—', '—'],
        ['Updraft token mode (upload API + STS, then storage)', '12.0', '96.0%', '90 (3.0)', '7'],
        ['ceiling: raw parallel node:http PUTs (presigned, no upload API)', '12.1', '97.0%', '60 (2.0)', '7'],
      ],
    })
    const files = networkCharts([
      table('home (100 Mbit/s)'),
      table('mobile (20 Mbit/s)'),
      { ...table('home (100 Mbit/s)'), title: 'home (100 Mbit/s), Node: 5 MiB, median of 3' },
    ])
    expect(files.map((file) => file.name)).toEqual(['network-node'])
    const { chart } = files[0]!
    expect(chart.groups.map((group) => group.title)).toEqual(['home (100 Mbit/s)', 'mobile (20 Mbit/s)'])
    expect(chart.groups[0]!.bars.map((bar) => [bar.label, bar.value, bar.kind])).toEqual([
      ['Updraft, token mode', 96, 'updraft'],
      ['ceiling: raw node:http PUTs', 97, 'ceiling'],
    ])
  })

  it('--update replaces one section and its header lines, leaving the other sections as they were', () => {
    const results = [
      '# Benchmark results',
      '',
      '## Headlines',
      '',
      '- Bundle (gzip): old 6.48 KB.',
      '- Node: 1118 MB/s.',
      '',
      '## Goals',
      '',
      '| benchmark | goal | figure | status |',
      '|---|---|---|---|',
      '| bundle | old goal | 6480 B | MISSED |',
      '| throughput | fast | 1.41x | met |',
      '',
      '## Closing note',
      '',
      '- **Missed: old goal** (6480 B). aws4fetch.',
      '- **Met: fast** (1.41x).',
      '',
      '## 1. Bundle',
      '',
      '**Bytes shipped**',
      '',
      '| bundle | gzip B |',
      '|---|---:|',
      '| old | 6480 |',
      '',
      '_2 s_',
      '',
      '## 2. Node throughput',
      '',
      '_From the full run at the top._',
      '',
      '**null sink: 256 MiB**',
      '',
      '| client | MB/s |',
      '|---|---:|',
      '| Updraft | 1118 |',
      '',
    ].join('\n')
    const section = {
      name: 'bundle',
      title: '1. Bundle',
      tables: [{ title: 'Bytes shipped', columns: ['bundle', 'gzip B'], rows: [['new', '7487']] }],
      goals: [{ goal: 'new goal', figure: '7487 B', met: false, note: 'SigV4.' }],
      notes: [],
      headlines: ['Bundle (gzip): new 7.49 KB.'],
      charts: [],
      seconds: 4,
    }
    const spliced = spliceSection(results, section, '_From a re-run._')
    expect(spliced).not.toMatch(/6480|6\.48|old|aws4fetch/)
    expect(spliced).toContain('- Bundle (gzip): new 7.49 KB.\n- Node: 1118 MB/s.')
    expect(spliced).toContain('| bundle | new goal | 7487 B | MISSED |\n| throughput | fast | 1.41x | met |')
    expect(spliced).toContain('- **Missed: new goal** (7487 B). SigV4.\n- **Met: fast** (1.41x).')
    expect(spliced).toContain('## 1. Bundle\n\n_From a re-run._\n\n**Bytes shipped**')
    expect(spliced.slice(spliced.indexOf('## 2.'))).toBe(results.slice(results.indexOf('## 2.')))
  })

  it('--update replaces a lettered section (## 2b.) in place: it was appended as a second copy', () => {
    const results = [
      '# Results',
      '',
      '## 2. Node',
      '',
      'two',
      '',
      '## 2b. Node by body',
      '',
      'old',
      '',
      '## 3. Sweep',
      '',
      'three',
      '',
    ].join('\n')
    const section = {
      name: 'node',
      title: '2b. Node by body',
      tables: [],
      goals: [],
      notes: ['new'],
      headlines: [],
      charts: [],
      seconds: 1,
    }
    const spliced = spliceSection(results, section, '_From a re-run._')
    expect(spliced.match(/^## 2b\./gm)).toHaveLength(1)
    expect(spliced).not.toContain('old')
    expect(spliced.indexOf('- new')).toBeGreaterThan(spliced.indexOf('## 2b.'))
    expect(spliced.indexOf('- new')).toBeLessThan(spliced.indexOf('## 3.'))
  })
})
