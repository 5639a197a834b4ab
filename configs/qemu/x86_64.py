# SPDX-License-Identifier: GPL-2.0
# tools/testing/kunit/qemu_configs/x86_64.py without `-bios qboot.rom`: under TCG, Debian 12's
# QEMU 7.2 printed nothing for over five minutes with qboot, while SeaBIOS (QEMU's default)
# booted the same kernel.
from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=[])
