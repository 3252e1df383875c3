#!/usr/bin/env python3
"""Checks that no function in src/ is longer than a reader can take in at once.

Every function body defined at namespace or class scope in a non-test source file
(src/**/*.cc and *.h, without *_test.cc, *_bench.cc, *_fuzz.cc and test_util.h files) is
measured from the first line of its declaration to its closing brace; lambdas and local
classes count toward the function they are written in. A body longer than --max lines
(150) is reported as `file:line: Name is N lines (at most 150); split it ...`.

The scan strips comments, string and character literals first and then follows the
braces: a `{` is a scope (namespace, class, struct, union, extern "C") whose contents are
looked at again, a function body when the text before it since the last `;`, `{` or `}`
holds a parameter list, and anything else (an initialiser, an enum) is skipped. Member
initialiser lists with braces (`: a_{x} {`) belong to the body that follows them.

Exit status 0 when every function fits, 1 with one line per function that does not.

Usage: scripts/check_function_length.py [--max N] [REPO_ROOT]
       scripts/check_function_length.py --self-test
"""
import os
import re
import sys

SCOPE_RE = re.compile(r'^\s*(?:template\s*<[^{]*>\s*)?(?:namespace\b|class\b|struct\b|union\b|'
                      r'extern\s*"C"|extern\b)')
ENUM_RE = re.compile(r'^\s*enum\b')
CONTROL_RE = re.compile(r'^\s*(?:if|for|while|switch|catch|do|else)\b')
NAME_RE = re.compile(r'([A-Za-z_~][\w:~<>]*(?:operator\s*\S+?)?)\s*\(')


def strip(text):
    """Comments, string and char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = ')' + m.group(1) + '"'
                j = text.find(end, i + m.end())
                j = n if j < 0 else j + len(end)
                out.append(''.join(ch if ch == '\n' else ' ' for ch in text[i:j]))
                i = j
            else:
                out.append(c)
                i += 1
        elif c in '"\'':
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(' ')
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def long_functions(text, limit):
    """(line, name, length) of every function body longer than `limit` lines."""
    text = strip(text)
    # Preprocessor lines are not part of any declaration's header.
    text = re.sub(r'(?m)^[ \t]*#.*$', lambda m: ' ' * len(m.group(0)), text)
    found = []
    stack = []  # 'scope', 'body', 'other', 'init'
    header_start = 0
    body = None  # (start offset, name) of the function being measured
    line_of = lambda pos: text.count('\n', 0, pos) + 1
    for pos, c in enumerate(text):
        if c == ';' and all(k == 'scope' for k in stack):
            header_start = pos + 1
        elif c == '{':
            if not all(k == 'scope' for k in stack):
                stack.append('other')
                continue
            header = text[header_start:pos]
            stripped = header.strip()
            if SCOPE_RE.match(stripped) and '(' not in stripped.split('{')[0].split(':')[0]:
                stack.append('scope')
                header_start = pos + 1
            elif ENUM_RE.match(stripped) or CONTROL_RE.match(stripped):
                stack.append('other')
            elif '(' in stripped and re.search(r'\)\s*:', stripped) and \
                    re.search(r'[\w>]\s*$', stripped):
                stack.append('init')  # a member initialiser: `: a_{...}`
            elif '(' in stripped and not stripped.startswith('='):
                stack.append('body')
                lead = len(header) - len(header.lstrip())
                m = NAME_RE.search(stripped)
                body = (header_start + lead, m.group(1) if m else stripped[:40])
            else:
                stack.append('other')
        elif c == '}':
            if not stack:
                continue
            kind = stack.pop()
            if kind == 'body' and all(k == 'scope' for k in stack) and body is not None:
                first, last = line_of(body[0]), line_of(pos)
                if last - first + 1 > limit:
                    found.append((first, body[1], last - first + 1))
                body = None
            if kind != 'init' and all(k == 'scope' for k in stack):
                header_start = pos + 1
    return found


def is_checked(name):
    if not (name.endswith('.cc') or name.endswith('.h')):
        return False
    return not (name.endswith(('_test.cc', '_bench.cc', '_fuzz.cc')) or name == 'test_util.h' or
                name.endswith('_test_util.h'))


def self_test():
    long_body = '\n'.join('  x += %d;' % i for i in range(160))
    text = (
        '// a comment with { braces ( and a "quote\n'
        'namespace rlt {\n'
        'namespace {\n'
        'int Short(int a) {\n  return a;\n}\n'
        'const char* kText = "{ not a brace (";\n'
        'enum class Kind { kA, kB };\n'
        'struct S {\n'
        '  S(int a) : a_{a}, b_(a) {\n' + long_body + '\n  }\n'
        '  int a_, b_;\n'
        '};\n'
        '}  // namespace\n'
        'int Long(int x) {\n'
        '  auto f = [](int y) { return y; };\n' + long_body + '\n'
        '  if (x) { x = f(x); }\n'
        '  return x;\n'
        '}\n'
        '}  // namespace rlt\n')
    got = long_functions(text, 150)
    names = [name for _, name, _ in got]
    assert names == ['S', 'Long'], got
    assert got[0][0] == 10 and got[0][2] == 162, got
    assert got[1][0] == 175 and got[1][2] == 165, got
    assert long_functions(text, 170) == [], long_functions(text, 170)
    print('check_function_length: self-test passed')
    return 0


def main(argv):
    limit = 150
    args = argv[1:]
    if args and args[0] == '--self-test':
        return self_test()
    if len(args) >= 2 and args[0] == '--max':
        limit = int(args[1])
        args = args[2:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    src = os.path.join(root, 'src')
    problems = []
    checked = 0
    for folder, _, files in sorted(os.walk(src)):
        for name in sorted(files):
            if not is_checked(name):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
            checked += 1
            for line, fn, length in long_functions(text, limit):
                problems.append('%s:%d: %s is %d lines (at most %d); split it into named steps' %
                                (os.path.relpath(path, root), line, fn, length, limit))
    for p in problems:
        print(p)
    if problems:
        return 1
    print('check_function_length: no function over %d lines in %d files' % (limit, checked))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
