"""The ``tensorweave`` command line."""

import subprocess
import sys

from tensorweave.cli import main


def test_plugins_lists_each_plugin_with_version_and_what_it_provides(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "standard_ops 0.1.0 [loaded]" in out
    assert "cpu 0.1.0 [loaded]" in out and "kernels[CPU]" in out and "devices: CPU:0" in out
    assert "partitioner" in out


def test_python_dash_m_works():
    result = subprocess.run([sys.executable, "-m", "tensorweave", "plugins"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "standard_ops" in result.stdout
