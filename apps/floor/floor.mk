# floor.mk: the floor (apps/floor), the benchmark's reference guest: a
# minimal HTTP responder on the virtio-net driver, no TCP/IP stack
# (apps/floor/floor.c says what it does). It links httpd's parser and
# response builder (apps/httpd/http.c, the same object httpd's image links)
# for answers byte for byte httpd's, and of the layers' archives only the
# driver: nothing of libnet.a (lwIP, the socket layer) is pulled in.
FLOOR_SRCS := apps/floor/floor.c apps/floor/link.c apps/floor/tcp.c apps/floor/answer.c apps/httpd/http.c

$(eval $(call app_image,floor,$(FLOOR_SRCS)))

TEST_DEPS += $(BUILD)/apps/floor.elf
