"""Regenerates docs/sql.md's function reference and dot-command list from what lancelet
prints (FunctionCatalogTest.TheDocsListWhatLanceletPrints fails until they agree):

    python3 scripts/sql_docs.py build/release/lancelet
"""
import subprocess, re, sys
cli = sys.argv[1]
f = subprocess.run([cli, 'sql', '--format', 'markdown', "SELECT function_name AS name, function_type AS kind, arguments, description FROM lancelet_functions()"], capture_output=True, text=True, check=True).stdout
h = subprocess.run([cli, 'sql', '--db', '/tmp'], input='.help\n', capture_output=True, text=True, check=True).stdout
p = 'docs/sql.md'
s = open(p).read()
s = re.sub(r'(<!-- functions:begin -->\n).*?(<!-- functions:end -->)', lambda m: m.group(1) + f + m.group(2), s, flags=re.S)
s = re.sub(r'(<!-- dot-commands:begin -->\n).*?(<!-- dot-commands:end -->)', lambda m: m.group(1) + '```\n' + h + '```\n' + m.group(2), s, flags=re.S)
open(p, 'w').write(s)
