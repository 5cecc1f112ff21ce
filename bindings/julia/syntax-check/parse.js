#!/usr/bin/env node
// Parse Julia files with tree-sitter-julia and fail on any syntax error.
//
// usage: node parse.js NODE_MODULES_DIR PATH [PATH ...]
//   NODE_MODULES_DIR  folder holding the installed tree-sitter and tree-sitter-julia packages
//   PATH              a .jl file, or a folder searched recursively for .jl files
//
// Prints file:line:col for every ERROR or MISSING node (and every stray block keyword, see
// findStrayKeywords) and exits 1 when there is any, or when no .jl file was found at all (a check
// of nothing must not pass). Exits 0 otherwise.
// This only proves that the files parse; it says nothing about whether the code runs.
'use strict';

const fs = require('fs');
const path = require('path');

const SKIP_DIRS = new Set(['node_modules', '.syntax-check', '.git']);

function usage() {
  console.error('usage: node parse.js NODE_MODULES_DIR PATH [PATH ...]');
  process.exit(2);
}

function collectJuliaFiles(target, out) {
  const st = fs.statSync(target);
  if (st.isFile()) {
    out.push(target);
    return;
  }
  if (!st.isDirectory()) return;
  const entries = fs.readdirSync(target, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(target, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) collectJuliaFiles(full, out);
    } else if (e.isFile() && e.name.endsWith('.jl')) {
      out.push(full);
    }
  }
}

// Every ERROR node and every MISSING node (a token the parser had to invent), in source order.
// Only subtrees that contain an error are entered.
function findProblems(root) {
  const problems = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.type === 'ERROR' || node.isError) {
      problems.push({ kind: 'ERROR', node });
    } else if (node.isMissing) {
      problems.push({ kind: 'MISSING', node });
    }
    if (!node.hasError) continue;
    const children = node.children;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  problems.sort((a, b) => a.node.startIndex - b.node.startIndex);
  return problems;
}

// tree-sitter-julia reads `end` as an identifier (so that `a[end]` parses) and, with it, lets a
// stray `end`, `else`, `elseif`, `catch` or `finally` through as an identifier too, although Julia
// rejects them. Flag such identifiers unless they are quoted (`:end`) or, for `end`/`begin`, sit
// inside the brackets of an indexing expression (`a[end]`, `a[begin:end-1]`).
const BLOCK_KEYWORDS = new Set(['end', 'begin', 'else', 'elseif', 'catch', 'finally']);

function insideIndexBrackets(node) {
  let child = node;
  for (let parent = node.parent; parent !== null; child = parent, parent = parent.parent) {
    if (parent.type === 'index_expression') {
      const object = parent.firstNamedChild;
      if (object === null || object.startIndex !== child.startIndex || object.endIndex !== child.endIndex) {
        return true;
      }
    }
  }
  return false;
}

function findStrayKeywords(root, text) {
  const found = [];
  const cursor = root.walk();
  for (;;) {
    if (cursor.nodeType === 'identifier') {
      const word = text.slice(cursor.startIndex, cursor.endIndex);
      if (BLOCK_KEYWORDS.has(word)) {
        const node = cursor.currentNode;
        const quoted = node.parent !== null && node.parent.type === 'quote_expression';
        const indexing = (word === 'end' || word === 'begin') && insideIndexBrackets(node);
        if (!quoted && !indexing) found.push(node);
      }
    }
    if (cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) return found;
    }
  }
}

function snippet(text, node) {
  const s = text.slice(node.startIndex, Math.min(node.endIndex, node.startIndex + 60));
  return JSON.stringify(s.split('\n')[0]);
}

function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) usage();
  const modules = path.resolve(args[0]);
  const Parser = require(path.join(modules, 'tree-sitter'));
  const Julia = require(path.join(modules, 'tree-sitter-julia'));
  const parser = new Parser();
  parser.setLanguage(Julia);

  const files = [];
  for (const t of args.slice(1)) collectJuliaFiles(path.resolve(t), files);
  if (files.length === 0) {
    console.error('syntax check: no .jl files found under ' + args.slice(1).join(' '));
    process.exit(1);
  }

  let bad = 0;
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    // Feed the text in chunks: the Node binding rejects a single string input above 32 KiB.
    const tree = parser.parse((index) => text.slice(index, index + 8192));
    const root = tree.rootNode;
    const rel = path.relative(process.cwd(), file) || file;
    if (root.type !== 'source_file' && root.type !== 'ERROR') {
      console.error(`${rel}:1:1: unexpected root node ${root.type}`);
      bad++;
      continue;
    }
    const stray = findStrayKeywords(root, text);
    if (root.type === 'source_file' && !root.hasError && stray.length === 0) {
      console.log(`ok   ${rel}`);
      continue;
    }
    bad++;
    for (const node of stray) {
      const pos = node.startPosition;
      console.error(`${rel}:${pos.row + 1}:${pos.column + 1}: syntax error: unexpected ` +
                    `${JSON.stringify(text.slice(node.startIndex, node.endIndex))}`);
    }
    if (root.type === 'source_file' && !root.hasError) continue;
    let problems = findProblems(root);
    if (root.type === 'ERROR') {
      // The whole file failed to parse (typically an unclosed block at the end): the root node
      // says nothing about where, so report it only when nothing more precise was found.
      const inner = problems.filter((p) => p.node.id !== root.id);
      if (inner.length > 0) {
        problems = inner;
      } else {
        console.error(`${rel}:1:1: syntax error: the file does not parse as a whole ` +
                      '(an unclosed block or a missing "end"?)');
        problems = [];
      }
    } else if (problems.length === 0) {
      console.error(`${rel}:1:1: the parse tree reports an error but no ERROR/MISSING node was found`);
    }
    const MAX_REPORTED = 10;
    if (problems.length > MAX_REPORTED) {
      console.error(`${rel}: ${problems.length} syntax errors, the first ${MAX_REPORTED} follow ` +
                    '(later ones are often consequences of the first)');
      problems = problems.slice(0, MAX_REPORTED);
    }
    for (const p of problems) {
      const pos = p.node.startPosition;
      const where = `${rel}:${pos.row + 1}:${pos.column + 1}`;
      if (p.kind === 'MISSING') {
        console.error(`${where}: syntax error: missing ${JSON.stringify(p.node.type)}`);
      } else {
        console.error(`${where}: syntax error near ${snippet(text, p.node)}`);
      }
    }
  }

  if (bad > 0) {
    console.error(`syntax check FAILED: ${bad} of ${files.length} .jl file(s) do not parse`);
    process.exit(1);
  }
  console.log(`syntax check passed: ${files.length} .jl file(s) parse without ERROR or MISSING nodes or stray keywords`);
}

main();
