// SPDX-License-Identifier: BSD-2-Clause
//! crossbeam-queue's ArrayQueue and SegQueue behind a C ABI, for syncq-lab's
//! peers (lab/peers/crossbeam.c puts them behind syncq's queue ops table).
//!
//! Items are opaque non-null pointers, carried as `usize` (raw pointers are
//! not `Send`; the queues never dereference them). Every function returns 0
//! on success, 1 when the queue is full (push) or empty (pop), and -1 for a
//! null queue; the C side checks everything else before calling.

use crossbeam_queue::{ArrayQueue, SegQueue};
use std::os::raw::{c_int, c_void};

const OK: c_int = 0;
const FULL_OR_EMPTY: c_int = 1;
const BAD: c_int = -1;

/// A bounded ArrayQueue of `capacity` (> 0) items; null if capacity is 0.
#[no_mangle]
pub extern "C" fn syncq_cb_array_new(capacity: usize) -> *mut c_void {
    if capacity == 0 {
        return std::ptr::null_mut();
    }
    Box::into_raw(Box::new(ArrayQueue::<usize>::new(capacity))) as *mut c_void
}

/// # Safety
/// `q` is null or came from `syncq_cb_array_new` and is not used after.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_array_free(q: *mut c_void) {
    if !q.is_null() {
        drop(Box::from_raw(q as *mut ArrayQueue<usize>));
    }
}

/// # Safety
/// `q` is null or a live queue from `syncq_cb_array_new`.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_array_push(q: *mut c_void, item: *mut c_void) -> c_int {
    match (q as *const ArrayQueue<usize>).as_ref() {
        None => BAD,
        Some(q) => match q.push(item as usize) {
            Ok(()) => OK,
            Err(_) => FULL_OR_EMPTY,
        },
    }
}

/// # Safety
/// `q` is null or a live queue from `syncq_cb_array_new`; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_array_pop(q: *mut c_void, out: *mut *mut c_void) -> c_int {
    match (q as *const ArrayQueue<usize>).as_ref() {
        None => BAD,
        Some(q) => match q.pop() {
            Some(v) => {
                *out = v as *mut c_void;
                OK
            }
            None => FULL_OR_EMPTY,
        },
    }
}

/// An unbounded SegQueue.
#[no_mangle]
pub extern "C" fn syncq_cb_seg_new() -> *mut c_void {
    Box::into_raw(Box::new(SegQueue::<usize>::new())) as *mut c_void
}

/// # Safety
/// `q` is null or came from `syncq_cb_seg_new` and is not used after.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_seg_free(q: *mut c_void) {
    if !q.is_null() {
        drop(Box::from_raw(q as *mut SegQueue<usize>));
    }
}

/// # Safety
/// `q` is null or a live queue from `syncq_cb_seg_new`.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_seg_push(q: *mut c_void, item: *mut c_void) -> c_int {
    match (q as *const SegQueue<usize>).as_ref() {
        None => BAD,
        Some(q) => {
            q.push(item as usize);
            OK
        }
    }
}

/// # Safety
/// `q` is null or a live queue from `syncq_cb_seg_new`; `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn syncq_cb_seg_pop(q: *mut c_void, out: *mut *mut c_void) -> c_int {
    match (q as *const SegQueue<usize>).as_ref() {
        None => BAD,
        Some(q) => match q.pop() {
            Some(v) => {
                *out = v as *mut c_void;
                OK
            }
            None => FULL_OR_EMPTY,
        },
    }
}
