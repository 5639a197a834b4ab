# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `drivers` (harness/src/drivers.rs). The initramfs's /init runs it with
# busybox `sh` after `drivers` set these variables in front of it:
#
#   ARCH           x86_64 or arm64
#   RUST_MODULES   the modules built from Rust (file names without .ko), in load order
#   DEP_MODULES    modules not built from Rust that RUST_MODULES need, in load order
#   EXPECT_EINVAL  modules whose init returns -EINVAL by design
#   ZEROS_256M     sha256 of 256 MiB of zeros
#   ZEROS_16M      sha256 of 16 MiB of zeros
#
# Each step prints one line that the host parses,
#
#   drivers-guest: PASS|FAIL|SKIP <step>[: <detail>]
#
# with no ": " in <step>, and the script ends with `drivers-guest: end`. It never exits: /init
# is PID 1, so everything that may fail to open runs in a subshell.

say() { echo "drivers-guest: $*"; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; }
skip() { say "SKIP $*"; }
# A command's output on one line, for a detail.
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

built() { case " $RUST_MODULES " in *" $1 "*) return 0 ;; esac; return 1; }
modname() { echo "$1" | tr - _; }
loaded() { grep -q "^$(modname "$1") " /proc/modules; }
expect_einval() { case " $EXPECT_EINVAL " in *" $1 "*) return 0 ;; esac; return 1; }
# The driver a device is bound to, empty if none.
driver_of() { [ -e "$1/driver" ] && basename "$(readlink "$1/driver")"; }
# Waits up to $2 tenths of a second for `test $1` (e.g. "-b /dev/rnull0") to hold.
wait_for() {
    local i=0
    while ! test $1 && [ $i -lt "$2" ]; do
        usleep 100000
        i=$((i + 1))
    done
    test $1
}

load_modules() { # $1: load or reload
    local m out rc
    for m in $DEP_MODULES; do
        loaded "$m" && continue
        if out=$(insmod "/modules/$m.ko" 2>&1); then
            pass "$1 dependency $m"
        else
            fail "$1 dependency $m: $(echo "$out" | oneline)"
        fi
    done
    for m in $RUST_MODULES; do
        out=$(insmod "/modules/$m.ko" 2>&1)
        rc=$?
        if expect_einval "$m"; then
            if [ $rc -ne 0 ] && echo "$out" | grep -q "Invalid argument"; then
                pass "$1 $m: init returned -EINVAL, as it does by design"
            else
                fail "$1 $m: expected -EINVAL from init, got exit status $rc $(echo "$out" | oneline)"
            fi
        elif [ $rc -eq 0 ]; then
            pass "$1 $m"
        else
            fail "$1 $m: $(echo "$out" | oneline)"
        fi
    done
}

unload_modules() {
    local m out reversed=""
    for m in $RUST_MODULES; do reversed="$m $reversed"; done
    for m in $reversed; do
        if ! loaded "$m"; then
            expect_einval "$m" || fail "unload $m: it is not loaded"
            continue
        fi
        if out=$(rmmod "$(modname "$m")" 2>&1); then
            pass "unload $m"
        else
            fail "unload $m: $(echo "$out" | oneline)"
        fi
    done
}

mount_configfs() {
    grep -q " /sys/kernel/config configfs " /proc/mounts ||
        mount -t configfs configfs /sys/kernel/config
}

# dd's record count: `dd_records FILE in|out` prints e.g. 256 for "256+0 records out".
dd_records() { sed -n "s/^\([0-9]*\)+0 records $2\$/\1/p" "$1"; }

# rnull (drivers/block/rnull) in 7.2 has no memory backing: it completes every request
# without touching its pages. Reads therefore return what the pages held before: zeros, since
# the boot passes init_on_alloc=1 (page cache) and dd's O_DIRECT buffer is fresh anonymous
# memory. Written data is not expected back.
rnull_device() { # name size-MiB irqmode
    local d=/sys/kernel/config/rnull/$1
    mkdir "$d" || return 1
    echo "$2" > "$d/size" && echo 4096 > "$d/blocksize" && echo "$3" > "$d/irqmode" &&
        echo 1 > "$d/power" && wait_for "-b /dev/$1" 50
}

rnull_remove() {
    local d=/sys/kernel/config/rnull/$1
    [ -d "$d" ] || return 0
    echo 0 > "$d/power" && rmdir "$d"
}

rnull_step() {
    if ! built rnull_mod; then
        skip "rnull: rnull_mod was not built"
        return
    fi
    if ! mount_configfs; then
        fail "rnull configfs: cannot mount configfs"
        return
    fi
    if ! rnull_device rnull0 512 0; then
        fail "rnull create: no /dev/rnull0 after powering on a 512 MiB device (irqmode 0)"
        rnull_remove rnull0
        return
    fi
    sectors=$(cat /sys/block/rnull0/size)
    if [ "$sectors" = 1048576 ]; then
        pass "rnull create: /dev/rnull0, 512 MiB, 4096-byte blocks, irqmode 0"
    else
        fail "rnull create: /sys/block/rnull0/size is $sectors, not 1048576 sectors"
    fi

    dd if=/dev/urandom of=/tmp/pattern bs=1M count=1 2>/dev/null
    i=0
    while [ $i -lt 256 ]; do
        cat /tmp/pattern
        i=$((i + 1))
    done | dd of=/dev/rnull0 bs=1M iflag=fullblock oflag=direct 2>/tmp/dd.err
    n=$(dd_records /tmp/dd.err out)
    if [ "$n" = 256 ]; then
        pass "rnull direct write: 256 MiB of a random pattern"
    else
        fail "rnull direct write: $(oneline < /tmp/dd.err)"
    fi

    blockdev --flushbufs /dev/rnull0
    echo 3 > /proc/sys/vm/drop_caches
    sum=$(dd if=/dev/rnull0 bs=1M count=256 2>/tmp/dd.err | sha256sum | cut -d' ' -f1)
    n=$(dd_records /tmp/dd.err in)
    if [ "$n" = 256 ] && [ "$sum" = "$ZEROS_256M" ]; then
        pass "rnull buffered read: 256 MiB of zeros, what rnull returns (it keeps no data)"
    else
        fail "rnull buffered read: $n MiB read, sha256 $sum, expected 256 MiB of zeros ($ZEROS_256M); $(oneline < /tmp/dd.err)"
    fi

    sum=$(dd if=/dev/rnull0 bs=1M count=256 iflag=direct 2>/tmp/dd.err | sha256sum | cut -d' ' -f1)
    n=$(dd_records /tmp/dd.err in)
    if [ "$n" = 256 ] && [ "$sum" = "$ZEROS_256M" ]; then
        pass "rnull direct read: 256 MiB, the untouched zeroed buffer"
    else
        fail "rnull direct read: $n MiB read, sha256 $sum, expected 256 MiB of zeros; $(oneline < /tmp/dd.err)"
    fi

    if rnull_device rnull1 16 1; then
        dd if=/tmp/pattern of=/dev/rnull1 bs=1M count=1 seek=15 oflag=direct 2>/tmp/dd.err
        w=$(dd_records /tmp/dd.err out)
        sum=$(dd if=/dev/rnull1 bs=1M count=16 iflag=direct 2>/tmp/dd.err | sha256sum | cut -d' ' -f1)
        r=$(dd_records /tmp/dd.err in)
        if [ "$w" = 1 ] && [ "$r" = 16 ] && [ "$sum" = "$ZEROS_16M" ]; then
            pass "rnull irqmode 1: 1 MiB written and 16 MiB of zeros read through the softirq completion"
        else
            fail "rnull irqmode 1: $w MiB written, $r MiB read, sha256 $sum (expected $ZEROS_16M)"
        fi
    else
        fail "rnull irqmode 1: no /dev/rnull1 after powering on a 16 MiB device (irqmode 1)"
    fi

    if rnull_remove rnull1 && rnull_remove rnull0 && [ ! -e /sys/block/rnull0 ]; then
        pass "rnull remove: both devices powered off and removed"
    else
        fail "rnull remove: a device is left in /sys/kernel/config/rnull or /sys/block"
    fi
}

binder_step() {
    if ! grep -qw binder /proc/filesystems; then
        fail "binder: no binder filesystem (CONFIG_ANDROID_BINDER_IPC_RUST is built in)"
        return
    fi
    mkdir -p /dev/binderfs
    if ! out=$(mount -t binder -o stats=global binder /dev/binderfs 2>&1); then
        fail "binderfs mount: $(echo "$out" | oneline)"
        return
    fi
    missing=""
    for dev in binder hwbinder vndbinder binder-control; do
        [ -c "/dev/binderfs/$dev" ] || missing="$missing $dev"
    done
    if [ -z "$missing" ]; then
        pass "binderfs mount: binder, hwbinder, vndbinder and binder-control"
    else
        fail "binderfs mount: missing$missing"
    fi
    # The subshell keeps /dev/binderfs/binder open while `cat` reads the driver's state.
    if out=$( (exec 3<>/dev/binderfs/binder && cat /dev/binderfs/binder_logs/state) 2>&1); then
        if echo "$out" | grep -q "^proc " && echo "$out" | grep -q "^context binder"; then
            pass "binder open: the state lists the process ($(echo "$out" | grep -m1 '^proc '))"
        else
            fail "binder open: the state does not list the process: $(echo "$out" | oneline)"
        fi
    else
        fail "binder open: $(echo "$out" | oneline)"
    fi
    if out=$(cat /dev/binderfs/binder_logs/stats 2>&1); then
        pass "binder stats: $(echo "$out" | head -n 1)"
    else
        fail "binder stats: $(echo "$out" | oneline)"
    fi
    umount /dev/binderfs
}

drm_panic_step() {
    param=/sys/module/drm/parameters/panic_screen
    if [ ! -e "$param" ]; then
        fail "drm_panic qr_code: no $param (CONFIG_DRM_PANIC)"
        return
    fi
    if ! printf qr_code > "$param" || [ "$(cat "$param")" != qr_code ]; then
        fail "drm_panic qr_code: the drm module does not accept panic_screen=qr_code (CONFIG_DRM_PANIC_SCREEN_QR_CODE)"
        return
    fi
    plane=$(ls /sys/kernel/debug/dri/*/drm_panic_plane_0 2>/dev/null | head -n 1)
    if [ -z "$plane" ]; then
        fail "drm_panic qr_code: no drm_panic_plane_0 in /sys/kernel/debug/dri: no DRM driver with drm_panic support bound a display ($(ls /sys/class/drm 2>&1 | oneline))"
        printf user > "$param"
        return
    fi
    # drm_panic.c prints "QR width N and scale M" with pr_debug() once the Rust encoder
    # (drm_panic_qr.rs) made a code that fits; otherwise it falls back to the `user` screen.
    echo 'file drm_panic.c +p' > /sys/kernel/debug/dynamic_debug/control
    before=$(dmesg | grep -c "QR width")
    echo 1 > "$plane"
    line=$(dmesg | grep "QR width" | tail -n 1)
    after=$(dmesg | grep -c "QR width")
    if [ "$after" -gt "$before" ]; then
        pass "drm_panic qr_code: drew the QR panic screen on ${plane#/sys/kernel/debug/dri/} (${line#*] })"
    else
        fail "drm_panic qr_code: writing $plane drew no QR code (no 'QR width' debug line: no framebuffer on the plane, or the encoder failed)"
    fi
    echo 'file drm_panic.c -p' > /sys/kernel/debug/dynamic_debug/control
    printf user > "$param"
}

# Binds a device to a driver through sysfs, unbinding it from another one first.
rebind() { # bus device driver
    local d=/sys/bus/$1/devices/$2
    local cur
    cur=$(driver_of "$d")
    [ "$cur" = "$3" ] && return 0
    if [ -n "$cur" ]; then
        echo "$2" > "$d/driver/unbind" || return 1
    fi
    echo "$2" > "/sys/bus/$1/drivers/$3/bind" || return 1
    [ "$(driver_of "$d")" = "$3" ]
}

unbind() { # bus device
    local d=/sys/bus/$1/devices/$2
    [ -e "$d/driver" ] && echo "$2" > "$d/driver/unbind"
    [ ! -e "$d/driver" ]
}

pci_step() {
    dev=""
    for d in /sys/bus/pci/devices/*; do
        if [ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0005 ]; then
            dev=${d##*/}
        fi
    done
    for m in rust_driver_pci rust_dma rust_driver_auxiliary; do
        if ! built "$m"; then
            skip "bind $m: not built"
            continue
        fi
        if [ -z "$dev" ]; then
            fail "bind $m: no pci-testdev (1b36:0005) in the guest"
            continue
        fi
        if ! rebind pci "$dev" "$m"; then
            fail "bind $m: $dev is bound to '$(driver_of "/sys/bus/pci/devices/$dev")' after binding it to $m"
            continue
        fi
        pass "bind $m: pci-testdev $dev"
        if [ "$m" = rust_driver_auxiliary ]; then
            for i in 0 1; do
                a=/sys/bus/auxiliary/devices/rust_driver_auxiliary.auxiliary.$i
                if [ -n "$(driver_of "$a")" ]; then
                    pass "auxiliary device $i: bound to $(driver_of "$a")"
                else
                    fail "auxiliary device $i: $a is missing or unbound"
                fi
            done
        fi
    done
    if [ -n "$dev" ]; then
        if unbind pci "$dev"; then
            pass "unbind pci-testdev: $dev"
        else
            fail "unbind pci-testdev: $dev is still bound to $(driver_of "/sys/bus/pci/devices/$dev")"
        fi
    fi
}

i2c_adapter=""
i2c_step() {
    if ! built rust_driver_i2c; then
        skip "i2c: rust_driver_i2c not built"
        return
    fi
    if [ ! -e /modules/i2c-stub.ko ]; then
        fail "i2c adapter: no i2c-stub.ko (CONFIG_I2C_STUB=m) to register an adapter"
        return
    fi
    if ! out=$(insmod /modules/i2c-stub.ko chip_addr=0x50 2>&1); then
        fail "i2c adapter: insmod i2c-stub: $(echo "$out" | oneline)"
        return
    fi
    for a in /sys/bus/i2c/devices/i2c-*; do
        if grep -q "SMBus stub driver" "$a/name"; then
            i2c_adapter=${a##*/i2c-}
        fi
    done
    if [ -z "$i2c_adapter" ]; then
        fail "i2c adapter: i2c-stub registered no adapter"
        return
    fi
    pass "i2c adapter: i2c-stub is i2c-$i2c_adapter"
    client=/sys/bus/i2c/devices/$i2c_adapter-0030
    echo rust_driver_i2c 0x30 > "/sys/bus/i2c/devices/i2c-$i2c_adapter/new_device"
    if [ "$(driver_of "$client")" = rust_driver_i2c ]; then
        pass "bind rust_driver_i2c: client rust_driver_i2c at 0x30 on i2c-$i2c_adapter"
    else
        fail "bind rust_driver_i2c: $client is bound to '$(driver_of "$client")'"
    fi
    echo 0x30 > "/sys/bus/i2c/devices/i2c-$i2c_adapter/delete_device"
    if [ ! -e "$client" ]; then
        pass "unbind rust_driver_i2c: client deleted"
    else
        fail "unbind rust_driver_i2c: $client is still there"
    fi
}

platform_device() {
    for d in /sys/bus/platform/devices/*; do
        if [ -e "$d/firmware_node/hid" ] && [ "$(cat "$d/firmware_node/hid")" = LNUXBEEF ]; then
            echo "${d##*/}"
            return
        fi
        if [ -e "$d/of_node/compatible" ] && grep -q "test,rust-device" "$d/of_node/compatible"; then
            echo "${d##*/}"
            return
        fi
    done
}

platform_step() {
    pdev=$(platform_device)
    p=/sys/bus/platform/devices/$pdev
    for m in rust_driver_platform rust_soc rust_debugfs rust_i2c_client; do
        case $m in
            rust_i2c_client) drv=rust_device_i2c ;;
            *) drv=$m ;;
        esac
        if ! built "$m"; then
            skip "bind $m: not built"
            continue
        fi
        if [ -z "$pdev" ]; then
            fail "bind $m: no platform device with ACPI _HID LNUXBEEF or compatible test,rust-device"
            continue
        fi
        if [ "$m" = rust_debugfs ] && [ ! -e "$p/firmware_node" ]; then
            skip "bind $m: it matches ACPI LNUXBEEF only, and $ARCH boots with a device tree"
            continue
        fi
        if [ "$m" = rust_i2c_client ] && [ "$i2c_adapter" != 0 ]; then
            skip "bind $m: it registers its client on i2c-0, and the stub adapter is i2c-${i2c_adapter:-none}"
            continue
        fi
        if ! rebind platform "$pdev" "$drv"; then
            fail "bind $m: $pdev is bound to '$(driver_of "$p")' after binding it to $drv"
            continue
        fi
        pass "bind $m: $pdev"
        case $m in
            rust_driver_platform)
                if [ -e "$p/of_node" ]; then
                    if dmesg | grep -q "'test,u32-prop'='0xdeadbeef'"; then
                        pass "rust_driver_platform properties: read test,u32-prop and the other properties"
                    else
                        fail "rust_driver_platform properties: no \"'test,u32-prop'='0xdeadbeef'\" in dmesg"
                    fi
                fi
                ;;
            rust_soc)
                if grep -qs ACME15 /sys/bus/soc/devices/*/soc_id; then
                    pass "rust_soc device: a SoC device with soc_id ACME15"
                else
                    fail "rust_soc device: no SoC device with soc_id ACME15 in /sys/bus/soc/devices"
                fi
                ;;
            rust_debugfs)
                c=$(cat /sys/kernel/debug/sample_debugfs/compatible 2>&1)
                n=$(cat /sys/kernel/debug/sample_debugfs/counter 2>&1)
                if echo "$c" | grep -q sample-debugfs && [ "$n" = 91 ]; then
                    pass "rust_debugfs files: compatible $c, counter $n"
                else
                    fail "rust_debugfs files: compatible '$c', counter '$n'"
                fi
                ;;
            rust_i2c_client)
                if [ "$(driver_of /sys/bus/i2c/devices/0-0030)" = rust_driver_i2c ]; then
                    pass "rust_i2c_client client: 0-0030 bound to rust_driver_i2c"
                else
                    fail "rust_i2c_client client: 0-0030 is not bound to rust_driver_i2c"
                fi
                ;;
        esac
    done
    if [ -n "$pdev" ]; then
        if unbind platform "$pdev"; then
            pass "unbind platform device: $pdev"
        else
            fail "unbind platform device: $pdev is still bound to $(driver_of "$p")"
        fi
    fi
}

# A USB gadget with the sample's vendor and product ID on dummy_hcd: the host side enumerates
# it, and rust_driver_usb binds its interface.
usb_step() {
    if ! built rust_driver_usb; then
        skip "bind rust_driver_usb: not built"
        return
    fi
    udc=$(ls /sys/class/udc 2>/dev/null | head -n 1)
    if [ -z "$udc" ] || ! mount_configfs || [ ! -d /sys/kernel/config/usb_gadget ]; then
        fail "bind rust_driver_usb: no UDC or no gadget configfs (CONFIG_USB_DUMMY_HCD, CONFIG_USB_CONFIGFS)"
        return
    fi
    g=/sys/kernel/config/usb_gadget/rust
    mkdir "$g" && echo 0x1234 > "$g/idVendor" && echo 0x5678 > "$g/idProduct" &&
        mkdir "$g/strings/0x409" && echo rust > "$g/strings/0x409/product" &&
        mkdir "$g/configs/c.1" && mkdir "$g/functions/SourceSink.0" &&
        ln -s "$g/functions/SourceSink.0" "$g/configs/c.1/" && echo "$udc" > "$g/UDC"
    bound=""
    i=0
    while [ -z "$bound" ] && [ $i -lt 100 ]; do
        bound=$(ls /sys/bus/usb/drivers/rust_driver_usb 2>/dev/null | grep ':' | head -n 1)
        [ -z "$bound" ] && usleep 100000
        i=$((i + 1))
    done
    if [ -n "$bound" ]; then
        pass "bind rust_driver_usb: interface $bound of a 1234:5678 gadget on $udc"
    else
        fail "bind rust_driver_usb: no interface bound to rust_driver_usb 10 s after connecting a 1234:5678 gadget to $udc"
    fi
    echo "" > "$g/UDC"
    rm -f "$g/configs/c.1/SourceSink.0"
    rmdir "$g/configs/c.1" "$g/functions/SourceSink.0" "$g/strings/0x409" "$g"
    if [ ! -e "$g" ]; then
        pass "remove usb gadget: disconnected and removed"
    else
        fail "remove usb gadget: $g is still there"
    fi
}

other_samples_step() {
    if built rust_driver_faux; then
        if [ -e /sys/bus/faux/devices/rust-faux-sample-device ]; then
            pass "rust_driver_faux device: rust-faux-sample-device"
        else
            fail "rust_driver_faux device: no /sys/bus/faux/devices/rust-faux-sample-device"
        fi
    fi
    if built rust_misc_device; then
        if out=$( (exec 3<>/dev/rust-misc-device) 2>&1); then
            pass "rust_misc_device open: /dev/rust-misc-device opened and closed"
        else
            fail "rust_misc_device open: $(echo "$out" | oneline)"
        fi
    fi
    if built rust_configfs && mount_configfs; then
        c=/sys/kernel/config/rust_configfs
        if mkdir "$c/child" && mkdir "$c/child/grandchild"; then
            msg=$(cat "$c/message" "$c/child/baz" "$c/child/grandchild/gc" 2>&1 | oneline)
            if [ "$msg" = "Hello World Hello Baz Hello GC" ]; then
                pass "rust_configfs groups: $msg"
            else
                fail "rust_configfs groups: read '$msg'"
            fi
        else
            fail "rust_configfs groups: cannot create child groups in $c"
        fi
        rmdir "$c/child/grandchild" "$c/child" 2>/dev/null
    fi
    if built rust_debugfs_scoped; then
        s=/sys/kernel/debug/rust_scoped_debugfs
        echo "dev0 7 8 9" > "$s/control/create"
        v=$(cat "$s/dynamic/dev0/1" 2>&1)
        echo 42 > "$s/dynamic/dev0/1"
        w=$(cat "$s/dynamic/dev0/1" 2>&1)
        echo dev0 > "$s/control/remove"
        if [ "$v" = 8 ] && [ "$w" = 42 ] && [ ! -e "$s/dynamic/dev0" ]; then
            pass "rust_debugfs_scoped files: created, read 8, wrote 42, removed"
        else
            fail "rust_debugfs_scoped files: read '$v', then '$w' after writing 42"
        fi
    fi
    for m in nova-core nova-drm tyr pwm_th1520 rcpufreq_dt ax88796b_rust qt2025; do
        built "$m" || continue
        case $m in
            nova-core | nova-drm) skip "probe $m: QEMU has no NVIDIA GPU (loaded and unloaded only)" ;;
            tyr) skip "probe $m: QEMU has no Mali CSF GPU (loaded and unloaded only)" ;;
            pwm_th1520) skip "probe $m: QEMU has no T-HEAD TH1520 PWM (loaded and unloaded only)" ;;
            rcpufreq_dt) skip "probe $m: no cpufreq-dt device with OPP tables in QEMU (loaded and unloaded only)" ;;
            ax88796b_rust | qt2025) skip "probe $m: QEMU has no such PHY (loaded and unloaded only)" ;;
        esac
    done
}

echo "overflow-harness: drivers guest script on $ARCH, $(echo $RUST_MODULES | wc -w) Rust modules"
load_modules load
rnull_step
binder_step
drm_panic_step
pci_step
i2c_step
platform_step
usb_step
other_samples_step
unload_modules
load_modules reload
say end
