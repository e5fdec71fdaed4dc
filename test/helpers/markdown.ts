// Reading the project's Markdown as the tests check it: the relative links
// (do they resolve where the file is read?) and the fenced code blocks (does
// each sample run?).
import { existsSync, readFileSync } from 'node:fs'
import { posix } from 'node:path'

export interface CodeBlock {
  /** The fence's info string, lower-cased: `js`, `ts`, `sh`, … */
  lang: string
  code: string
  /** 1-based line of the opening fence. */
  line: number
  /** `<!-- sample: NAME -->` on the line before the fence, if any. */
  name: string | undefined
}

/** Every fenced block (``` or ~~~), with its language and the sample name set before it. */
export function codeBlocks (markdown: string): CodeBlock[] {
  const lines = markdown.split('\n')
  const blocks: CodeBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i])
    if (open === null) continue
    const fence = open[2]
    const body: string[] = []
    let j = i + 1
    while (j < lines.length && !lines[j].trimStart().startsWith(fence)) body.push(lines[j++])
    const before = i > 0 ? /^<!--\s*sample:\s*([\w-]+)\s*-->\s*$/.exec(lines[i - 1].trim()) : null
    blocks.push({ lang: open[3].toLowerCase(), code: body.join('\n') + '\n', line: i + 1, name: before?.[1] })
    i = j
  }
  return blocks
}

/** The lines of Markdown outside its fenced blocks. */
function * outsideFences (markdown: string): Generator<string> {
  let fence: string | null = null
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker !== undefined) { fence = marker; continue }
    if (fence !== null) {
      if (line.trimStart().startsWith(fence)) fence = null
      continue
    }
    yield line
  }
}

/** Markdown without its fenced blocks and inline code spans, where links are not links. */
function prose (markdown: string): string {
  const kept: string[] = []
  for (const line of outsideFences(markdown)) kept.push(line.replace(/`[^`]*`/g, ''))
  return kept.join('\n')
}

/** The targets of the relative links and images: no scheme, no protocol-relative URL. */
export function relativeLinks (markdown: string): string[] {
  const text = prose(markdown)
  const targets: string[] = []
  for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1])
  for (const match of text.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"/g)) targets.push(match[1])
  for (const match of text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)) targets.push(match[1])
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target))
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchors (markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of outsideFences(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const slug = heading[1].toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/**
 * Why a link from a file in `dir` (relative to `root`) does not resolve
 * among `files` (paths relative to `root`), or undefined when it does: the
 * file is there (a directory: a file under it), and an anchor into a
 * Markdown file names one of its headings.
 */
export function brokenLink (root: string, dir: string, link: string, files: readonly string[], from?: string): string | undefined {
  const hash = link.indexOf('#')
  const path = decodeURIComponent(hash === -1 ? link : link.slice(0, hash))
  const anchor = hash === -1 ? '' : decodeURIComponent(link.slice(hash + 1))
  const target = path === '' ? (from ?? '') : posix.normalize(posix.join(dir, path))
  if (target.startsWith('..') || posix.isAbsolute(target)) return `${link} leaves the package`
  const isDir = path.endsWith('/') || target === '.'
  if (isDir ? !files.some((file) => file.startsWith(target === '.' ? '' : target.replace(/\/?$/, '/'))) : !files.includes(target)) {
    return `${target} is not there`
  }
  if (anchor !== '' && target.endsWith('.md')) {
    const file = posix.join(root, target)
    if (!existsSync(file) || !headingAnchors(readFileSync(file, 'utf8')).has(anchor)) return `${target} has no heading #${anchor}`
  }
  return undefined
}
