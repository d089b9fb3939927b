"""Runs a command, sends it a signal once a line of its output matches,
and prints its output and exit status (for the lit test of a clean stop).

    python3 interrupt.py PATTERN SIGNAL [--twice] -- COMMAND...

SIGNAL is INT or TERM; --twice sends a second one when the command says it
is stopping (its "stopping after this step" line).
Prints the command's output (stdout and stderr merged), then
"exit status N".
"""
import re
import signal
import subprocess
import sys


def main():
    args = sys.argv[1:]
    split = args.index("--")
    options, command = args[:split], args[split + 1:]
    pattern, name = re.compile(options[0]), options[1]
    twice = "--twice" in options
    number = {"INT": signal.SIGINT, "TERM": signal.SIGTERM}[name]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    sent = False
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if not sent and pattern.search(line):
            proc.send_signal(number)
            sent = True
        elif sent and twice and "stopping after this step" in line:
            proc.send_signal(number)
            twice = False
    status = proc.wait()
    sys.stdout.write("".join(lines))
    print(f"signal sent: {sent}")
    # A process killed by a signal has a negative return code.
    print(f"exit status {status if status >= 0 else 128 - status}")


if __name__ == "__main__":
    main()
